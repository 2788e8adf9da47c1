"""Optimizers (SGD, Adam, AdamW), learning-rate schedulers and global-norm clipping."""

from . import lr
from .adam import Adam, AdamW
from .clip import ClipGradByGlobalNorm, clip_grad_norm_
from .lr import CosineAnnealingLR, LinearWarmup, LRScheduler, StepLR
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["lr", "Optimizer", "SGD", "Adam", "AdamW", "LRScheduler", "StepLR",
           "CosineAnnealingLR", "LinearWarmup", "ClipGradByGlobalNorm", "clip_grad_norm_"]
