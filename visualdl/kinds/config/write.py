"""Configs, writer side: checked and copied into a nested dict in the caller's thread
(:mod:`.normalize`), stored as JSON."""

from __future__ import annotations

import json
from typing import Any

from visualdl.kinds.config.normalize import to_nested


def check(config: Any) -> tuple[str, int]:
    """The config's JSON (a copy no later change by the caller alters) and its size."""
    text = json.dumps(to_nested(config), ensure_ascii=False, allow_nan=False)
    return text, len(text)


def encode(msg: Any, payload: str) -> None:
    msg.json = payload
