"""Checkpoints, writer side: the path as the engine reports it, and the step."""

from __future__ import annotations

from typing import Any

from visualdl.kinds.checks import check_text_size, check_utf8


def check(rank: int, path: Any) -> tuple[tuple[int, str], int]:
    if not isinstance(path, str):
        path = getattr(path, "__fspath__", lambda: path)()
    if not isinstance(path, str) or not path:
        raise ValueError(f"path must be a non-empty str (or os.PathLike), got {path!r}")
    check_utf8("checkpoint", "path", path)
    check_text_size("checkpoint", "path", path)
    return (rank, path), len(path)


def encode(msg: Any, payload: tuple[int, str]) -> None:
    msg.rank, msg.path = payload
