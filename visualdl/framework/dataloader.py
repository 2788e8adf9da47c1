"""Datasets and a DataLoader: batching, seeded shuffling, drop_last.

Batches are built on the host with numpy (one fancy-index per field for a TensorDataset) and
become tensors on the requested device; shuffling uses ``numpy.random.default_rng(seed +
epoch)``, so a seeded loader gives the same order in every run and a new order every epoch.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from . import device as _device
from . import random as _random
from .profiler import recorder as _profiling
from .profiler.categories import DATALOADER
from .tensor import Tensor


class Dataset:
    """Map-style dataset: implement ``__getitem__(i)`` and ``__len__``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class TensorDataset(Dataset):
    """Samples are the i-th rows of equally long arrays/tensors: ``(x[i], y[i], ...)``."""

    def __init__(self, *arrays: Any) -> None:
        if not arrays:
            raise ValueError("TensorDataset needs at least one array")
        self.arrays = [a.numpy() if isinstance(a, Tensor) else np.asarray(a) for a in arrays]
        n = len(self.arrays[0])
        if any(len(a) != n for a in self.arrays):
            raise ValueError(f"arrays have different lengths: {[len(a) for a in self.arrays]}")

    def __getitem__(self, index: int) -> tuple[np.ndarray, ...]:
        return tuple(a[index] for a in self.arrays)

    def __len__(self) -> int:
        return len(self.arrays[0])


def _to_tensor(value: np.ndarray, device: str | None) -> Tensor:
    arr = np.asarray(value)
    if arr.dtype == np.float64 and not isinstance(value, np.ndarray):
        arr = arr.astype(np.float32)
    return Tensor(arr, device=device)


def default_collate(items: Sequence[Any], device: str | None = None) -> Any:
    """Stack a list of samples field by field into tensors (tuples/lists/dicts recurse)."""
    first = items[0]
    if isinstance(first, (tuple, list)):
        return type(first)(default_collate([it[i] for it in items], device) for i in range(len(first)))
    if isinstance(first, dict):
        return {k: default_collate([it[k] for it in items], device) for k in first}
    if isinstance(first, Tensor):
        return Tensor(np.stack([it.numpy() for it in items]), device=device)
    if isinstance(first, (float, int, bool)) and not isinstance(first, np.generic):
        return Tensor(items, device=device)
    return _to_tensor(np.stack([np.asarray(it) for it in items]), device)


class DataLoader:
    """Iterate a dataset in batches.

    ``shuffle`` draws a new permutation each epoch from ``default_rng(seed + epoch)``; with
    ``seed=None`` the seed comes from the global generator (``vf.seed``). ``drop_last`` skips
    a final short batch. A ``batch_sampler`` (an iterable of index arrays with a length, e.g.
    ``vf.distributed.DistributedBatchSampler``) replaces batching, shuffling and drop_last.
    """

    def __init__(self, dataset: Dataset, batch_size: int = 1, shuffle: bool = False,
                 drop_last: bool = False, seed: int | None = None,
                 collate_fn: Callable[[list], Any] | None = None, device: str | None = None,
                 batch_sampler: Any = None) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.dataset, self.batch_size = dataset, int(batch_size)
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        self.seed = seed if seed is not None else int(_random.generator().integers(0, 2**31))
        self.collate_fn, self.device = collate_fn, device
        self.epoch = 0
        self.batch_sampler = batch_sampler

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self) -> np.ndarray:
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n)
        return np.random.default_rng(self.seed + self.epoch).permutation(n)

    def _index_batches(self) -> Iterator[np.ndarray]:
        if self.batch_sampler is not None:
            yield from self.batch_sampler
            return
        order = self._order()
        self.epoch += 1
        stop = len(self) * self.batch_size if self.drop_last else len(order)
        for start in range(0, stop, self.batch_size):
            yield order[start:start + self.batch_size]

    def __iter__(self) -> Iterator[Any]:
        fast = isinstance(self.dataset, TensorDataset) and self.collate_fn is None
        on_gpu = self.device is not None and _device.normalize(self.device) == _device.CUDA
        for number, idx in enumerate(self._index_batches()):
            rec = _profiling.active  # vf.profiler: each batch's making is a Dataloader span
            t0 = time.perf_counter_ns() if rec is not None else 0
            if fast:
                if rec is not None and on_gpu:  # the host -> device copy, timed apart
                    host = [a[idx] for a in self.dataset.arrays]
                    batch = rec.copy_to_device(
                        lambda: tuple(Tensor(h, device=self.device) for h in host),
                        sum(h.nbytes for h in host))
                else:
                    batch = tuple(Tensor(a[idx], device=self.device) for a in self.dataset.arrays)
            else:
                items = [self.dataset[int(i)] for i in idx]
                batch = (self.collate_fn(items) if self.collate_fn is not None
                         else default_collate(items, self.device))
            if rec is not None and rec is _profiling.active:
                if rec.memory is not None:
                    for t in (batch if isinstance(batch, (tuple, list)) else ()):
                        if isinstance(t, Tensor):
                            rec.track(t._data, t._device, "DataLoader.__next__")
                rec.span(DATALOADER, "DataLoader.__next__", t0,
                         args={"Batch": number, "Samples": len(idx)})
            yield batch
