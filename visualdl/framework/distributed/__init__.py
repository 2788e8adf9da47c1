"""Data-parallel training for ``visualdl.framework``, with PaddlePaddle's names.

    import visualdl.framework.distributed as dist
    dist.spawn(train, nprocs=2)           # or run under Ray Train: dist.ray_train.fit_on_ray
    # in train(): model.fit(data, ..., distributed=True)

``init_parallel_env``/``get_rank``/``get_world_size``: the group; ``DataParallel``: a
replica whose gradients any optimizer's ``step`` averages by all-reduce first (PaddlePaddle's
plain loop works); ``fleet``: Paddle's collective calls (``init``, ``distributed_optimizer``,
``DistributedStrategy``, ``worker_index``...); ``DistributedBatchSampler``: each rank's share
of every global batch; ``spawn``: processes on one machine. Collectives come from an existing
library (PyTorch's gloo, ``visualdl[distributed]``) behind one small ``Communicator``
interface; docs/distributed.md explains the choice and the elastic runs on Ray Train.
"""

from . import fleet
from .communicator import Communicator, SingleProcess
from .env import communicator, get_rank, get_world_size, init_parallel_env, shutdown
from .errors import DistributedError
from .launch import spawn
from .parallel import DataParallel
from .sampler import DistributedBatchSampler

__all__ = ["init_parallel_env", "get_rank", "get_world_size", "communicator", "shutdown",
           "DataParallel", "DistributedBatchSampler", "spawn", "fleet", "Communicator",
           "SingleProcess", "DistributedError"]
