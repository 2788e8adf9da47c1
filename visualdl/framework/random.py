"""The framework's global random state (parameter init, dropout, DataLoader shuffling).

One seeded numpy Generator makes a whole run reproducible with ``vf.seed(n)``; CUDA dropout
draws its per-call seed from the same generator so it is reproducible too.
"""

from __future__ import annotations

import numpy as np

_generator = np.random.default_rng()
_version = 0  # bumped by seed(): device RNG states cached by backends are rebuilt


def seed(value: int) -> None:
    """Seed every random source the framework uses."""
    global _generator, _version
    _generator = np.random.default_rng(int(value))
    _version += 1


def version() -> int:
    return _version


def generator() -> np.random.Generator:
    """The global generator (host side)."""
    return _generator


def next_seed() -> int:
    """A fresh 63-bit seed for a kernel that makes its own random numbers."""
    return int(_generator.integers(0, 2**63 - 1))
