"""Small deterministic datasets and models for the high-level API tests."""

from __future__ import annotations

import numpy as np

import visualdl.framework as vf
from visualdl.framework import nn


def blobs(n: int = 96, classes: int = 3, dim: int = 6, seed: int = 0):
    """Linearly separable Gaussian blobs: (x float32 (n, dim), y int64 (n,))."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 3, (classes, dim))
    y = np.arange(n) % classes
    x = (centers[y] + rng.normal(0, 0.5, (n, dim))).astype(np.float32)
    return x, y.astype(np.int64)


def images(n: int = 48, classes: int = 3, seed: int = 0):
    """Tiny 1x8x8 'images' whose class sets which quadrant is bright."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    x = rng.uniform(0, 0.2, (n, 1, 8, 8)).astype(np.float32)
    for i, c in enumerate(y):
        x[i, 0, (c % 2) * 4:(c % 2) * 4 + 4, (c // 2) * 4:(c // 2) * 4 + 4] += 0.8
    return x, y.astype(np.int64)


def mlp(dim: int = 6, classes: int = 3) -> nn.Layer:
    vf.seed(0)
    return nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, classes))


def cnn(classes: int = 3) -> nn.Layer:
    vf.seed(0)
    return nn.Sequential(nn.Conv2D(1, 4, 3, padding=1), nn.BatchNorm2D(4), nn.ReLU(),
                         nn.MaxPool2D(2), nn.Flatten(), nn.Linear(64, classes))
