"""Checkpoints a training run saved (``LogWriter.add_checkpoint``): the path the training
engine reports and the step, listed per run (``/api/ranks``, the run's checkpoint list)."""

from visualdl.kinds.spec import Kind

KIND = Kind("checkpoint", __name__, message="checkpoint")
