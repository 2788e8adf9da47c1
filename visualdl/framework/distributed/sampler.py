"""``DistributedBatchSampler``: each rank's share of every global batch.

Layout: each epoch draws one permutation (the same on every rank: ``seed + epoch``); global
batch k is ``order[k*B : (k+1)*B]`` with ``B = world_size * batch_size``, and rank r takes
its r-th equal piece. So training on W ranks with ``batch_size`` b sees exactly the batches
of one process with ``batch_size`` W*b over the same order -- the equivalence the tests
check -- and a resumed epoch can start at any sample offset, whatever the new world size
(the elastic restart). The order is padded with its first samples to a multiple of W, so
every rank gets a piece of each step (none waits in an all-reduce the others never start).
That holds only when every rank shards the same number of samples in batches of the same
size: a sampler of the current group (``num_replicas`` and ``rank`` left to it) compares
them across the ranks when it is made, so a rank with other data fails at once, named,
instead of training on its own shards or leaving a peer waiting at the end of the epoch.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from . import env


class DistributedBatchSampler:
    """Index batches of ``dataset`` (a dataset, or its number of samples) for rank ``rank``
    of ``num_replicas`` -- by default this process's in the current group, as
    ``paddle.io.DistributedBatchSampler(dataset, batch_size, num_replicas=None, rank=None,
    shuffle=False, drop_last=False)``."""

    def __init__(self, dataset: Any, batch_size: int, num_replicas: int | None = None,
                 rank: int | None = None, shuffle: bool = False, drop_last: bool = False,
                 seed: int = 0) -> None:
        num_samples = dataset if isinstance(dataset, (int, np.integer)) else len(dataset)
        of_group = num_replicas is None and rank is None
        if num_replicas is None:
            num_replicas = env.get_world_size()
        if rank is None:
            rank = env.get_rank()
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if of_group and env.is_initialized() and num_replicas > 1:
            from .parallel import check_same_everywhere

            check_same_everywhere(env.communicator(), "DistributedBatchSampler's data "
                                  "(samples, batch_size, drop_last)",
                                  (int(num_samples), int(batch_size), bool(drop_last)))
        if not 0 <= rank < num_replicas:
            raise ValueError(f"rank must be in 0..{num_replicas - 1}, got {rank}")
        self.num_samples, self.batch_size = int(num_samples), int(batch_size)
        self.num_replicas, self.rank = int(num_replicas), int(rank)
        self.shuffle, self.drop_last, self.seed = bool(shuffle), bool(drop_last), int(seed)
        self.epoch, self.offset = 0, 0

    def set_epoch(self, epoch: int, offset: int = 0) -> None:
        """Next iteration: epoch ``epoch``'s order, from sample ``offset`` of it (resume)."""
        self.epoch, self.offset = int(epoch), int(offset)

    def _order(self) -> np.ndarray:
        n = self.num_samples
        order = (np.random.default_rng(self.seed + self.epoch).permutation(n) if self.shuffle
                 else np.arange(n))[self.offset:]
        pad = -len(order) % self.num_replicas
        return np.concatenate([order, order[:pad]]) if pad else order

    def __len__(self) -> int:
        n = self.num_samples - self.offset
        n += -n % self.num_replicas
        step = self.batch_size * self.num_replicas
        return n // step if self.drop_last else -(-n // step)

    def __iter__(self) -> Iterator[np.ndarray]:
        order, step = self._order(), self.batch_size * self.num_replicas
        for k in range(len(self)):
            chunk = order[k * step:(k + 1) * step]
            piece = len(chunk) // self.num_replicas
            yield chunk[self.rank * piece:(self.rank + 1) * piece]
        self.epoch, self.offset = self.epoch + 1, 0
