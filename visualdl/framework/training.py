"""``vf.Model``: the high-level training API (fit, evaluate, predict, save, load).

    model = vf.Model(net)
    model.prepare(vf.optim.Adam(net.parameters(), 1e-3), vf.nn.CrossEntropyLoss(),
                  metrics=[vf.metric.Accuracy()])
    model.fit(train_set, eval_set, epochs=5, batch_size=64,
              callbacks=[vf.callbacks.VisualDL("runs/exp1")])

Batches are tuples of tensors; the first ``num_inputs`` fields (default 1) go to the network,
the rest are labels for the loss and metrics. Each train batch costs one host read of the loss
(``loss.item()``), which every callback then shares through ``logs``: logging adds no syncs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from . import data as _data
from .autograd import no_grad
from .callbacks.base import Callback, CallbackList
from .callbacks.checkpoint import ModelCheckpoint
from .callbacks.lr import LRScheduler
from .callbacks.progress import ProgBarLogger
from .metric import Metric
from .nn.layer import Layer
from .profiler import recorder as _profiling
from .profiler.categories import BACKWARD, DATALOADER, FORWARD
from .serialization import load as _load
from .serialization import save as _save
from .tensor import Tensor


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


class Model:
    """Wraps a network with its optimizer, loss and metrics; trains, evaluates, predicts,
    saves and loads it.

    ``inputs``: how many leading fields of each batch feed the network (an int), or a list
    of ``vf.jit.InputSpec`` (its length is used, and ``save(training=False)`` exports with
    it). Everything after them is passed to the loss as labels.
    """

    def __init__(self, network: Layer, inputs: int | Sequence[Any] | None = None,
                 labels: Any = None) -> None:
        if not isinstance(network, Layer):
            raise TypeError(f"Model needs a vf.nn.Layer, got {type(network).__name__}")
        self.network = network
        self.input_specs = [] if inputs is None or isinstance(inputs, int) else list(inputs)
        self.num_inputs = inputs if isinstance(inputs, int) else (len(self.input_specs) or 1)
        self.optimizer: Any = None
        self.loss: Any = None
        self.metrics: list[Metric] = []
        self.stop_training = False
        self.batch: tuple[list[Tensor], list[Tensor]] | None = None  # (inputs, labels) now
        self.train_loader: Any = None  # the loader fit() iterates (sharded when distributed)
        self.start_epoch = 0  # fit() starts here; a resuming callback's on_train_begin sets it
        self.resumed: dict | None = None  # {"step", "restart", "world_size"} of a resume
        self.checkpoints: list[dict] = []  # {"path", "step"} of each checkpoint reported

    # ------------------------------------------------------------ setup
    def prepare(self, optimizer: Any = None, loss: Any = None,
                metrics: Metric | Iterable[Metric] | None = None) -> None:
        """Set the optimizer, the loss (a layer or any callable ``loss(*outputs, *labels)``)
        and the metrics."""
        if loss is not None and not callable(loss):
            raise TypeError("loss must be a callable, e.g. vf.nn.CrossEntropyLoss()")
        self.optimizer, self.loss = optimizer, loss
        self.metrics = _as_list(metrics)
        for m in self.metrics:
            if not isinstance(m, Metric):
                raise TypeError(f"metrics must be vf.metric.Metric instances, got {type(m).__name__}")

    def metrics_names(self) -> list[str]:
        """Log names: ``loss`` (when a loss is set) then each metric's names."""
        names = ["loss"] if self.loss is not None else []
        for m in self.metrics:
            names.extend(m.name())
        return names

    def parameters(self) -> list[Tensor]:
        return self.network.parameters()

    def _device(self) -> str | None:
        # the first parameter's device; runs per batch, so no full parameter list is built
        return next((p.device for _, p in self.network.named_parameters()), None)

    def _split(self, batch: Any) -> tuple[list[Tensor], list[Tensor]]:
        fields = list(batch) if isinstance(batch, (list, tuple)) else [batch]
        dev = self._device()
        fields = [(f if f.device == dev or dev is None else f.to(dev)) if isinstance(f, Tensor)
                  else Tensor(np.asarray(f), device=dev) for f in fields]
        return fields[:self.num_inputs], fields[self.num_inputs:]

    def _loader(self, data: Any, batch_size: int, shuffle: bool, drop_last: bool) -> Any:
        if data is None or isinstance(data, _data.DataLoader):
            return data
        if isinstance(data, tuple) and all(isinstance(a, (np.ndarray, Tensor)) for a in data):
            data = _data.TensorDataset(*data)  # convenience: (x, y) arrays
        if isinstance(data, _data.Dataset):
            return _data.DataLoader(data, batch_size, shuffle=shuffle, drop_last=drop_last,
                                    device=self._device())
        return data  # any iterable of batches

    # ------------------------------------------------------------ one batch
    def _loss(self, outputs: Any, labels: list[Tensor]) -> Tensor:
        losses = self.loss(*(_as_list(outputs) + labels))
        if isinstance(losses, (list, tuple)):
            total = losses[0]
            for extra in losses[1:]:
                total = total + extra
            return total
        return losses

    def _metric_results(self, logs: dict) -> dict:
        """Add each metric's accumulated values (over the epoch or evaluation) to ``logs``."""
        for m in self.metrics:
            for name, value in zip(m.name(), _as_list(m.accumulate())):
                logs[name] = float(value)
        return logs

    def _batch_len(self) -> int:
        """Samples in the current batch (its first input's leading dimension)."""
        first = self.batch[0][0]
        return first.shape[0] if first.ndim else 1

    def _metric_logs(self, outputs: Any, labels: list[Tensor], logs: dict) -> None:
        pred = _as_list(outputs)[0]
        for m in self.metrics:
            values = _as_list(m.update(*m.compute(pred, *labels)))
            for name, value in zip(m.name(), values):
                logs[name] = float(value)

    def train_batch(self, inputs: Sequence[Tensor], labels: Sequence[Tensor] = ()) -> dict:
        """One optimization step; returns the batch's logs (``loss`` and metric values).
        Gradients stay in ``.grad`` until the next step (callbacks may read them)."""
        if self.optimizer is None or self.loss is None:
            raise RuntimeError("call model.prepare(optimizer, loss) before training")
        self.network.train()
        rec = _profiling.active  # vf.profiler: the forward and backward phases as spans
        t0 = time.perf_counter_ns() if rec is not None else 0
        outputs = self.network(*inputs)
        loss = self._loss(outputs, list(labels))
        if rec is not None and rec is _profiling.active:
            rec.span(FORWARD, "forward", t0, args={"Model.fit phase": "forward"})
        self.optimizer.clear_grad()
        if rec is not None:
            t0 = time.perf_counter_ns()
        loss.backward()
        if rec is not None and rec is _profiling.active:
            rec.span(BACKWARD, "backward", t0, args={"Model.fit phase": "backward"})
        self.optimizer.step()
        logs = {"loss": loss.item()}
        self._metric_logs(outputs, list(labels), logs)
        return logs

    @no_grad()
    def eval_batch(self, inputs: Sequence[Tensor], labels: Sequence[Tensor] = ()) -> dict:
        self.network.eval()
        rec = _profiling.active
        t0 = time.perf_counter_ns() if rec is not None else 0
        outputs = self.network(*inputs)
        logs: dict[str, float] = {}
        if self.loss is not None and labels:
            logs["loss"] = self._loss(outputs, list(labels)).item()
        if rec is not None and rec is _profiling.active:
            rec.span(FORWARD, "eval", t0, args={"Model.fit phase": "eval"})
        self._metric_logs(outputs, list(labels), logs)
        return logs

    def _batches(self, loader: Any) -> Iterator[tuple[list[Tensor], list[Tensor]]]:
        """Split batches of ``loader``; while vf.profiler records, fetching and moving each
        batch to the model's device is a Dataloader span (any iterable, not only ours)."""
        it = iter(loader)
        while True:
            rec = _profiling.active
            t0 = time.perf_counter_ns() if rec is not None else 0
            try:
                batch = next(it)
            except StopIteration:
                return
            split = self._split(batch)
            if rec is not None and rec is _profiling.active:
                rec.span(DATALOADER, "Model.fit: next batch", t0)
            yield split

    @no_grad()
    def predict_batch(self, inputs: Sequence[Tensor]) -> list[np.ndarray]:
        self.network.eval()
        return [o.numpy() for o in _as_list(self.network(*inputs))]

    # ------------------------------------------------------------ loops
    def _callbacks(self, callbacks: Any, mode: str, verbose: int, log_freq: int,
                   save_dir: str | None, save_freq: int, params: dict) -> CallbackList:
        cbks = _as_list(callbacks)
        for cb in cbks:
            if not isinstance(cb, Callback):
                raise TypeError(f"callbacks must be vf.callbacks.Callback instances, got "
                                f"{type(cb).__name__}")
        if verbose and not any(isinstance(cb, ProgBarLogger) for cb in cbks):
            cbks.insert(0, ProgBarLogger(log_freq, verbose))
        if mode == "train":
            if save_dir and not any(isinstance(cb, ModelCheckpoint) for cb in cbks):
                # first: the checkpoint of an epoch is saved (and reported) before the
                # other callbacks' ends of that epoch see it (VisualDL logs it there)
                cbks.insert(0, ModelCheckpoint(save_freq, save_dir))
            sched = getattr(self.optimizer, "lr_scheduler", None)
            if sched is not None and not any(isinstance(cb, LRScheduler) for cb in cbks):
                cbks.append(LRScheduler(by_step=True))
        params = dict(params, verbose=verbose, log_freq=log_freq, save_dir=save_dir, mode=mode,
                      metrics=self.metrics_names())
        return CallbackList(cbks, self, params)

    def fit(self, train_data: Any = None, eval_data: Any = None, batch_size: int = 1,
            epochs: int = 1, eval_freq: int = 1, log_freq: int = 10, save_dir: str | None = None,
            save_freq: int = 1, verbose: int = 1, drop_last: bool = False, shuffle: bool = True,
            num_workers: int = 0, callbacks: Any = None, distributed: Any = False) -> dict:
        """Train for ``epochs`` over ``train_data`` (a Dataset, DataLoader or iterable of
        batches), evaluating on ``eval_data`` every ``eval_freq`` epochs and after the last.
        Returns the last evaluation's logs (or the last epoch's train logs); a fit resumed
        after its last epoch evaluates without training.

        ``distributed=True``: data-parallel over the group of ``vf.distributed`` (processes
        of ``spawn``, or Ray Train's workers, which also resume from and report checkpoints):
        the network becomes a ``DataParallel`` replica, each rank trains on its shard with
        ``batch_size`` per rank, and gradients are averaged every step. A
        ``fleet.DistributedStrategy`` instead of True sets how: ``sharding=True`` also
        splits the optimizer's updates over the ranks (each updates 1/N of the parameters)."""
        del num_workers  # batches are built in this thread (numpy fancy-indexing is cheap)
        cbks_extra: list = []
        if distributed:
            from .distributed import fit as _distributed

            comm = _distributed.prepare_model(self, None if distributed is True else distributed)
            train_loader = _distributed.shard(comm, train_data, batch_size, shuffle, drop_last,
                                              self._device())
            cbks_extra = _distributed.callbacks()
        else:
            train_loader = self._loader(train_data, batch_size, shuffle, drop_last)
        eval_loader = self._loader(eval_data, batch_size, False, False)
        if train_loader is None:
            raise ValueError("fit needs train_data")
        self.train_loader = train_loader
        steps = len(train_loader) if hasattr(train_loader, "__len__") else None
        cbks = self._callbacks(cbks_extra + _as_list(callbacks), "train", verbose, log_freq,
                               save_dir, save_freq,
                               {"batch_size": batch_size, "epochs": epochs, "steps": steps,
                                "eval": eval_loader is not None})
        self.stop_training = False
        self.start_epoch, self.resumed, self.checkpoints = 0, None, []
        result: dict = {}
        cbks.on_train_begin()
        for epoch in range(self.start_epoch, epochs):
            cbks.on_epoch_begin(epoch)
            result = self._train_epoch(train_loader, cbks)
            cbks.on_epoch_end(epoch, result)
            last = epoch == epochs - 1 or self.stop_training
            if eval_loader is not None and ((epoch + 1) % eval_freq == 0 or last):
                result = self._eval_loop(eval_loader, cbks)
            if self.stop_training:
                break
        if self.start_epoch >= epochs and eval_loader is not None:
            # resumed from a checkpoint taken after the last epoch (a group restarted as
            # the one before it finished): nothing left to train, the answer is still the
            # trained model's evaluation
            result = self._eval_loop(eval_loader, cbks)
        cbks.on_train_end(result)
        return result

    def _train_epoch(self, loader: Any, cbks: CallbackList) -> dict:
        for m in self.metrics:
            m.reset()
        loss_sum, seen = 0.0, 0
        for step, split in enumerate(self._batches(loader)):
            self.batch = split
            cbks.on_train_batch_begin(step)
            logs = self.train_batch(*self.batch)
            n = self._batch_len()
            logs["batch_size"] = n
            loss_sum += logs["loss"] * n
            seen += n
            cbks.on_train_batch_end(step, logs)
            if self.stop_training:
                break
        self.batch = None
        return self._metric_results({"loss": loss_sum / max(seen, 1)})

    def _eval_loop(self, loader: Any, cbks: CallbackList) -> dict:
        for m in self.metrics:
            m.reset()
        steps = len(loader) if hasattr(loader, "__len__") else None
        cbks.on_eval_begin({"steps": steps})
        loss_sum, seen = 0.0, 0
        for step, split in enumerate(self._batches(loader)):
            self.batch = split
            cbks.on_eval_batch_begin(step)
            logs = self.eval_batch(*self.batch)
            n = self._batch_len()
            if "loss" in logs:
                loss_sum += logs["loss"] * n
            seen += n
            cbks.on_eval_batch_end(step, logs)
        self.batch = None
        result: dict[str, float] = {}
        if self.loss is not None and seen:
            result["loss"] = loss_sum / seen
        self._metric_results(result)
        cbks.on_eval_end(result)
        self.network.train()
        return result

    def evaluate(self, eval_data: Any, batch_size: int = 1, log_freq: int = 10,
                 verbose: int = 1, num_workers: int = 0, callbacks: Any = None) -> dict:
        """Loss and metrics over ``eval_data``: ``{"loss": ..., "acc": ...}``."""
        loader = self._loader(eval_data, batch_size, False, False)
        cbks = self._callbacks(callbacks, "eval", verbose, log_freq, None, 1,
                               {"batch_size": batch_size, "epochs": 1, "steps": None,
                                "eval": True})
        return self._eval_loop(loader, cbks)

    def predict(self, test_data: Any, batch_size: int = 1, num_workers: int = 0,
                stack_outputs: bool = False, verbose: int = 1, callbacks: Any = None) -> list:
        """The network's outputs over ``test_data``: one entry per output, each a list of
        per-batch numpy arrays (or one concatenated array with ``stack_outputs``)."""
        loader = self._loader(test_data, batch_size, False, False)
        steps = len(loader) if hasattr(loader, "__len__") else None
        cbks = self._callbacks(callbacks, "predict", verbose, 10, None, 1,
                               {"batch_size": batch_size, "epochs": 1, "steps": steps,
                                "eval": False})
        cbks.on_predict_begin({"steps": steps})
        outputs: list[list[np.ndarray]] = []
        for step, batch in enumerate(loader):
            inputs, _ = self._split(batch)
            cbks.on_predict_batch_begin(step)
            outs = self.predict_batch(inputs)
            if not outputs:
                outputs = [[] for _ in outs]
            for acc, o in zip(outputs, outs):
                acc.append(o)
            cbks.on_predict_batch_end(step, {"batch_size": inputs[0].shape[0]})
        cbks.on_predict_end()
        self.network.train()
        if stack_outputs:
            return [np.concatenate(o, axis=0) for o in outputs]
        return outputs

    # ------------------------------------------------------------ persistence
    def save(self, path: str, training: bool = True) -> None:
        """``training=True``: ``path.vfparams`` (network state) and ``path.vfopt`` (optimizer
        state). ``training=False``: ``path.onnx``, the traced inference program (needs the
        ``inputs`` specs given to ``Model``)."""
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if training:
            _save(self.network.state_dict(), path + ".vfparams")
            if self.optimizer is not None:
                _save(self.optimizer.state_dict(), path + ".vfopt")
            return
        if not self.input_specs:
            raise ValueError("save(training=False) exports ONNX and needs Model(net, inputs="
                             "[vf.jit.InputSpec(...)]) to know the input shapes")
        from .onnx import export

        export(self.network, self.input_specs, path + ".onnx")

    def load(self, path: str, skip_mismatch: bool = False, reset_optimizer: bool = False) -> None:
        """Restore what ``save(path)`` wrote. ``skip_mismatch`` ignores missing, unexpected
        or differently shaped entries instead of raising."""
        state = _load(path + ".vfparams")
        if skip_mismatch:
            own = self.network.state_dict()
            state = {k: v for k, v in state.items() if k in own and tuple(v.shape) == own[k].shape}
        self.network.load_state_dict(state, strict=not skip_mismatch)
        if self.optimizer is not None and not reset_optimizer and os.path.exists(path + ".vfopt"):
            self.optimizer.set_state_dict(_load(path + ".vfopt"))

    def summary(self) -> str:
        """Each sub-layer's dotted name, type and parameter count, and the total."""
        lines = []
        for name, layer in self.network.named_sublayers(include_self=False):
            n = sum(p.numel() for p in layer._parameters.values() if p is not None)
            lines.append(f"{name:<32} {type(layer).__name__:<16} {n:>10,}")
        total = sum(p.numel() for p in self.network.parameters())
        lines.append(f"{'total':<32} {'':<16} {total:>10,}")
        return "\n".join(lines)
