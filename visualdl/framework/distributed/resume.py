"""A training checkpoint that an elastic restart resumes from: the model and optimizer
(``Model.save``) plus where training stood (step, epoch, samples of the epoch done, restart
count) in ``visualdl_state.json``. Plain files in one folder, so Ray Train (or anything
else) can move it; loading checks that it fits the model and says which rank found it not."""

from __future__ import annotations

import json
import os
from typing import Any

from ..serialization import load as _load
from .env import get_rank
from .errors import DistributedError

STATE_FILE = "visualdl_state.json"
MODEL_NAME = "model"


def save_training_state(model: Any, directory: str, state: dict[str, int]) -> None:
    """Write ``model`` (``model.vfparams``/``.vfopt``) and ``state`` into ``directory``."""
    model.save(os.path.join(directory, MODEL_NAME))
    with open(os.path.join(directory, STATE_FILE), "w") as f:
        json.dump(state, f)


def load_training_state(model: Any, directory: str) -> dict[str, int]:
    """Load the checkpoint in ``directory`` into ``model``; return its state. A folder that
    is not such a checkpoint, or one saved from another model, raises a DistributedError
    naming this rank and the problem (names and shapes that differ)."""
    try:
        with open(os.path.join(directory, STATE_FILE)) as f:
            raw = json.load(f)
        state = {k: int(raw[k]) for k in ("step", "epoch", "samples", "restart")}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DistributedError(get_rank(), f"checkpoint {directory} is not a visualdl "
                                           f"training checkpoint ({exc})") from exc
    path = os.path.join(directory, MODEL_NAME)
    try:
        saved = _load(path + ".vfparams")
    except (OSError, ValueError, KeyError) as exc:
        raise DistributedError(get_rank(), f"checkpoint {directory} has no readable model "
                                           f"({exc})") from exc
    own = model.network.state_dict()
    wrong = [f"{name} {tuple(saved[name].shape)} where the model has {tuple(t.shape)}"
             for name, t in own.items() if name in saved and tuple(saved[name].shape) != t.shape]
    missing = [name for name in own if name not in saved]
    extra = [name for name in saved if name not in own]
    if wrong or missing or extra:  # checked before anything is loaded: the model is intact
        raise DistributedError(get_rank(), f"checkpoint {directory} was saved from another "
                                           f"model: shapes {wrong[:3]}, missing {missing[:3]}, "
                                           f"unexpected {extra[:3]}")
    model.load(path)
    return state
