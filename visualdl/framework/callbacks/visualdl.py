"""``VisualDL``: everything a training run should show in the dashboard, with one line.

Cost per train batch in the training thread: ``len(logs) + 1`` ``add_scalar`` calls (about a
microsecond each) on values ``Model`` already read -- no extra device syncs. Histograms copy
each parameter and gradient every ``histogram_freq`` steps (bucketing happens in the writer's
thread); the graph is traced once, the sample grid is made once per epoch.
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any

import numpy as np

from .base import Callback

# environment variables naming this process's rank, by launcher
_RANK_VARIABLES = ("RANK", "PADDLE_TRAINER_ID", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                   "SLURM_PROCID")


def process_rank() -> int:
    """This process's global rank under torchrun/paddle.distributed/MPI/Slurm, else 0."""
    for var in _RANK_VARIABLES:
        value = os.environ.get(var, "")
        if value.strip().lstrip("-").isdigit():
            return int(value)
    return 0


def image_grid_batch(x: np.ndarray, max_images: int) -> np.ndarray | None:
    """Up to ``max_images`` samples of an NCHW batch as uint8 NCHW (each image min-max
    scaled, small images enlarged to at least 32 px), or None if ``x`` is not images."""
    if x.ndim != 4 or x.shape[1] not in (1, 3) or min(x.shape[2:]) < 4 or x.dtype.kind not in "fiu":
        return None
    imgs = x[:max_images].astype(np.float32)
    lo = imgs.min(axis=(1, 2, 3), keepdims=True)
    hi = imgs.max(axis=(1, 2, 3), keepdims=True)
    imgs = (imgs - lo) / np.where(hi > lo, hi - lo, 1.0)
    scale = max(1, 32 // min(imgs.shape[2:]))
    if scale > 1:
        imgs = imgs.repeat(scale, axis=2).repeat(scale, axis=3)
    return np.clip(imgs * 255.0 + 0.5, 0, 255).astype(np.uint8)


_PROFILER_OPTIONS = {"record_shapes", "profile_memory", "timer_only", "targets"}


def _check_profile_steps(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    if (not isinstance(value, (tuple, list)) or len(value) != 2
            or any(isinstance(v, bool) or not isinstance(v, int) for v in value)):
        raise ValueError(f"VisualDL: profile_steps must be (start, end) ints, got {value!r}")
    start, end = int(value[0]), int(value[1])
    if start < 1 or end <= start:
        raise ValueError(f"VisualDL: profile_steps=(start, end) needs 1 <= start < end "
                         f"(steps count from 1), got {value!r}")
    return start, end


class VisualDL(Callback):
    """Log a ``Model.fit`` run to ``log_dir`` for visualdl.

    Tags written -- exactly these (``<m>``: ``loss`` and each metric's log names, e.g.
    ``acc``; ``<p>``: each parameter's dotted name, e.g. ``features.0.weight``):

    ========== ====================== ==============================================
    kind       tag                    when
    ========== ====================== ==============================================
    scalar     ``train/<m>``          every train batch (the batch's value)
    scalar     ``train/lr``           every train batch (the rate used for it)
    scalar     ``eval/<m>``           after each evaluation, at the current step
    histogram  ``weights/<p>``        every ``histogram_freq`` steps (from step 1)
    histogram  ``grads/<p>``          same steps (parameters that have a gradient)
    image      ``inputs/samples``     first batch of each epoch, if the first input
                                      is an NCHW image batch with 1 or 3 channels
    graph      ``model``              once, traced (ONNX) from the first batch
    hparams    ``hparams``            once, at the start: ``optimizer``, ``lr``,
                                      ``batch_size``, ``epochs``, ``model_params``
                                      and any ``hparams`` given here; its metrics
                                      are the ``eval/<m>`` tags (``train/<m>``
                                      without eval data), whose final values the
                                      hparams view shows
    config     ``config``             once, at the start: ``fit.batch_size``,
                                      ``fit.epochs``, ``optimizer.name``,
                                      ``optimizer.lr``, ``model.name``,
                                      ``model.params``, with ``config`` given here
                                      merged over them (a dict, Namespace,
                                      dataclass, OmegaConf config or YAML/JSON path)
    ========== ====================== ==============================================

    With ``activation_layers=[...]`` (dotted sub-layer names) it also writes, every
    ``histogram_freq`` steps, ``activations/<layer>`` (histogram) and
    ``activations/<layer>/mean``, ``.../std``, ``.../zero_fraction`` (scalars) through
    ``vf.ActivationStats``; by default it does not.

    With ``profile_steps=(start, end)`` it also runs ``vf.profiler.Profiler`` over train
    steps ``start`` .. ``end - 1`` (the same step numbers as the scalars; the trace's spans
    are ``ProfilerStep#start`` ..) and writes the trace as the profile kind, tag
    ``worker<rank>``, at step ``start`` with ``end_step`` the last profiled step.
    ``profiler_options`` go to ``Profiler`` (``record_shapes``, ``profile_memory``,
    ``timer_only``, ``targets``). Training that ends inside the window writes what it got.
    The ``Profiler`` stays in ``.profiler`` (``cb.profiler.summary()``, ``.export(path)``).

    Steps count train batches from 1 across epochs. ``log_graph``, ``log_images``,
    ``histogram_freq=0`` turn parts off. ``writer_kwargs`` go to ``LogWriter``:
    ``system_metrics=`` (seconds, default 10, or False) samples the machine's state while
    the run is open.

    Data-parallel training (ranks are read from RANK / PADDLE_TRAINER_ID /
    OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID, as ``Model.fit(distributed=True)``,
    ``vf.distributed.spawn`` and Ray Train set them): every rank writes its own file into
    ``log_dir``, tagged with its rank and world size, holding its ``train/<m>``,
    ``train/lr``, ``eval/<m>`` scalars, ``train/samples_per_sec`` (this rank's throughput,
    per step, in runs of more than one process) and its profile; rank 0 alone writes what
    the replicas share (histograms, images, activations, graph, hparams, config), an
    elastic restart (``add_resize``: world size, step resumed at, restart count) and every
    checkpoint reported (``add_checkpoint``). After a restart, steps go on from the step of
    the checkpoint it resumed from.
    """

    def __init__(self, log_dir: str, histogram_freq: int = 50, log_images: bool = True,
                 max_images: int = 16, log_graph: bool = True,
                 hparams: dict[str, Any] | None = None,
                 activation_layers: list[str] | None = None,
                 profile_steps: tuple[int, int] | None = None,
                 profiler_options: dict[str, Any] | None = None, config: Any = None,
                 **writer_kwargs: Any) -> None:
        self.log_dir = log_dir
        self.config = None
        if config is not None:  # checked now, so a bad config fails here, not in fit()
            from visualdl.kinds.config.normalize import to_nested

            self.config = to_nested(config)
        self.histogram_freq = max(0, int(histogram_freq))
        self.log_images, self.max_images = log_images, int(max_images)
        self.log_graph = log_graph
        self.extra_hparams = dict(hparams or {})
        self.activation_layers = list(activation_layers or [])
        self._activations: Any = None
        self.writer_kwargs = writer_kwargs
        self.rank = process_rank()
        # every rank writes its scalars; rank 0 alone what the replicas share
        self.heavy = self.rank == 0
        self._samples_clock: float | None = None  # when the last train batch ended
        self._checkpoints_logged = 0
        self.writer: Any = None
        self.step = 0
        self._graph_done = False
        self._epoch_images = False
        self._named_params: list = []
        self._lr: float | None = None
        self.profile_steps = _check_profile_steps(profile_steps)
        self.profiler_options = dict(profiler_options or {})
        bad = set(self.profiler_options) - _PROFILER_OPTIONS
        if bad:
            raise ValueError(f"VisualDL: unknown profiler_options {sorted(bad)}; allowed: "
                             f"{sorted(_PROFILER_OPTIONS)}")
        self._profiler: Any = None
        self.profiler: Any = None  # the vf.profiler.Profiler of profile_steps, once started

    # ------------------------------------------------------------ writer
    def _open(self) -> Any:
        if self.writer is None:
            from visualdl.writer.log_writer import LogWriter

            self.writer = LogWriter(logdir=self.log_dir, **self.writer_kwargs)
        return self.writer

    def _close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    # ------------------------------------------------------------ training
    def on_train_begin(self, logs: dict | None = None) -> None:
        writer = self._open()
        resumed = self.model.resumed  # an elastic restart (vf.distributed.ray_train)
        self._checkpoints_logged = 0
        self._samples_clock = None
        if resumed:
            self.step = int(resumed["step"])
            if self.heavy:
                writer.add_resize(int(resumed["world_size"]), self.step, int(resumed["restart"]))
                # at once, as checkpoints are: the next resize may end this group within
                # flush_secs, and the run's step axis must still mark this one
                writer.flush()
        if self.profile_steps is not None:
            self._start_profiler(writer)
        if not self.heavy:
            self._graph_done, self._epoch_images = True, True
            return
        net = self.model.network
        self._named_params = list(net.named_parameters())
        self._graph_done = not self.log_graph
        opt = self.model.optimizer
        sched = getattr(opt, "lr_scheduler", None)
        hparams: dict[str, Any] = {
            # the optimizer's own name, also under fleet.distributed_optimizer's wrapper
            "optimizer": type(getattr(opt, "inner", opt)).__name__,
            "lr": float(sched.base_lr if sched is not None else opt.get_lr()),
            "batch_size": int(self.params.get("batch_size") or 0),
            "epochs": int(self.params.get("epochs") or 0),
            "model_params": int(sum(p.numel() for _, p in self._named_params)),
        }
        hparams.update(self.extra_hparams)
        if self.activation_layers:
            from ..activation_stats import ActivationStats

            self._activations = ActivationStats(writer, net, self.activation_layers,
                                                every=self.histogram_freq or 50)
        prefix = "eval" if self.params.get("eval") else "train"
        metrics = [f"{prefix}/{name}" for name in self.params.get("metrics", [])]
        writer.add_hparams(hparams, metrics)
        writer.add_config({
            "fit": {"batch_size": hparams["batch_size"], "epochs": hparams["epochs"]},
            "optimizer": {"name": hparams["optimizer"], "lr": hparams["lr"]},
            # the network's own name, also under DataParallel (which keeps it as _layers)
            "model": {"name": type(net.__dict__.get("_layers", net)).__name__,
                      "params": hparams["model_params"]}})
        if self.config is not None:
            writer.add_config(self.config)  # merged over the one above

    def _start_profiler(self, writer: Any) -> None:
        from .. import profiler

        start, end = self.profile_steps
        prof = profiler.Profiler(scheduler=(start, end),
                                 on_trace_ready=profiler.export_visualdl(
                                     writer, tag=f"worker{process_rank()}"),
                                 **self.profiler_options)
        prof.step_num = self.step + 1  # the profiler counts the steps our scalars count
        prof.start()
        self._profiler = self.profiler = prof

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._epoch_images = not (self.log_images and self.heavy)

    def on_train_batch_begin(self, step: int, logs: dict | None = None) -> None:
        opt = self.model.optimizer
        self._lr = opt.get_lr() if opt is not None else None  # the rate this batch uses
        if self._activations is not None:
            self._activations.set_step(self.step + 1)
        if self._graph_done and self._epoch_images:
            return
        inputs = self.model.batch[0] if self.model.batch else []
        if not inputs:
            return
        if not self._graph_done:
            self._graph_done = True
            self._add_graph(inputs)
        if not self._epoch_images:
            self._epoch_images = True
            grid = image_grid_batch(inputs[0].numpy(), self.max_images)
            if grid is not None:
                self.writer.add_image("inputs/samples", grid, self.step + 1, dataformats="NCHW")
            else:
                self.log_images = False  # not images: never look again

    def _add_graph(self, inputs: list) -> None:
        try:
            proto = self.model.network.to_onnx(list(inputs))
        except Exception as exc:  # logging must never stop training
            warnings.warn(f"VisualDL callback: the model graph could not be exported ({exc})",
                          RuntimeWarning, stacklevel=3)
            return
        self.writer.add_graph(proto, step=0, tag="model")

    def on_train_batch_end(self, step: int, logs: dict | None = None) -> None:
        self.step += 1
        s = self.step
        add = self.writer.add_scalar
        for name, value in (logs or {}).items():
            if name != "batch_size":
                add(f"train/{name}", value, s)
        if self._lr is not None:
            add("train/lr", self._lr, s)
        if self.writer.world_size is not None:  # a data-parallel run: each rank's pace
            now = time.perf_counter()
            if self._samples_clock is not None and now > self._samples_clock:
                add("train/samples_per_sec",
                    float((logs or {}).get("batch_size", 0)) / (now - self._samples_clock), s)
            self._samples_clock = now
        if self.heavy:
            self._log_checkpoints()
            if self.histogram_freq and (s - 1) % self.histogram_freq == 0:
                self._histograms(s)
        prof = self._profiler
        if prof is not None:
            prof.step(num_samples=(logs or {}).get("batch_size"))
            if prof.step_num >= self.profile_steps[1]:  # the window is written: done
                prof.stop()
                self._profiler = None

    def _histograms(self, step: int) -> None:
        add = self.writer.add_histogram
        for name, p in self._named_params:
            add(f"weights/{name}", p.numpy(), step)
        for name, p in self._named_params:
            g = p.grad
            if g is not None:
                add(f"grads/{name}", g.numpy(), step)

    def _log_checkpoints(self) -> None:
        """``add_checkpoint`` for each checkpoint reported since the last call, flushed at
        once: an elastic resize ends this worker without warning (within ``flush_secs``),
        and the run's list of checkpoints must still hold the one the next group resumes
        from."""
        reported = self.model.checkpoints
        new = reported[self._checkpoints_logged:]
        for entry in new:
            self.writer.add_checkpoint(entry["path"], int(entry["step"]))
        self._checkpoints_logged = len(reported)
        if new:
            self.writer.flush()

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self.heavy and self.writer is not None:
            self._log_checkpoints()  # an epoch's checkpoint is reported at its end

    def on_eval_end(self, logs: dict | None = None) -> None:
        self._samples_clock = None  # the evaluation's time is not a train step's
        writer = self._open()
        for name, value in (logs or {}).items():
            writer.add_scalar(f"eval/{name}", value, self.step)
        if self.params.get("mode") != "train":
            self._close()  # a standalone evaluate(): nothing else will close it

    def on_train_end(self, logs: dict | None = None) -> None:
        if self.heavy and self.writer is not None:
            self._log_checkpoints()  # the final one, saved as training ended
        if self._profiler is not None:  # training ended inside the window: write it
            self._profiler.stop()
            self._profiler = None
        if self._activations is not None:
            self._activations.remove()
            self._activations = None
        self._close()
