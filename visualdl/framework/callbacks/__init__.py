"""Callbacks for ``vf.Model.fit/evaluate/predict`` (``vf.callbacks``)."""

from .base import Callback, CallbackList
from .checkpoint import ModelCheckpoint
from .early_stopping import EarlyStopping
from .lr import LRScheduler
from .progress import ProgBarLogger
from .visualdl import VisualDL

__all__ = [
           "Callback",
           "CallbackList",
           "EarlyStopping",
           "LRScheduler",
           "ModelCheckpoint",
           "ProgBarLogger",
           "VisualDL",
]
