"""Data-parallel training for ``visualdl.framework``, with PaddlePaddle's names.

    import visualdl.framework.distributed as dist
    dist.spawn(train, nprocs=2)           # or run under Ray Train: dist.ray_train.fit_on_ray
    # in train(): model.fit(data, ..., distributed=True)

``init_parallel_env``/``get_rank``/``get_world_size``: the group; ``DataParallel``: a
replica whose gradients any optimizer's ``step`` averages by all-reduce first (PaddlePaddle's
plain loop works); ``fleet``: Paddle's collective calls (``init``, ``distributed_optimizer``,
``DistributedStrategy``, ``worker_index``...); Paddle's tensor collectives (``all_reduce``,
``reduce``, ``broadcast``, ``scatter``, ``all_gather``, ``barrier``, ``new_group`` of every
rank, ``ParallelEnv``...); ``DistributedBatchSampler``:
each rank's share of every global batch; ``spawn``: processes on one machine. Collectives
come from existing libraries (MPI, PyTorch's gloo; ``visualdl[distributed]``) behind one
small ``Communicator`` interface; docs/distributed.md explains the choice and the elastic
runs on Ray Train.
"""

from . import fleet
from .collective import (
    Group, ParallelEnv, ReduceOp, all_gather, all_gather_object, all_reduce, barrier,
    broadcast, get_group, new_group, reduce, scatter,
)
from .communicator import Communicator, SingleProcess
from .env import (
    communicator, get_rank, get_world_size, init_parallel_env, is_initialized, shutdown,
)
from .errors import DistributedError
from .spawning import spawn
from .parallel import DataParallel
from .sampler import DistributedBatchSampler

__all__ = ["init_parallel_env", "get_rank", "get_world_size", "communicator", "shutdown",
           "DataParallel", "DistributedBatchSampler", "spawn", "fleet", "Communicator",
           "SingleProcess", "DistributedError", "ParallelEnv", "ReduceOp", "barrier",
           "all_reduce", "broadcast", "all_gather", "all_gather_object", "is_initialized",
           "reduce", "scatter", "new_group", "get_group", "Group"]
