"""The profile kind's start-up hook: the parse worker for the newest profile is started as
soon as the server's first load lists it, while the server is still importing its web
stack (see :func:`visualdl.kinds.profile.warm.prefetch`)."""

from __future__ import annotations

from typing import Any

from visualdl.kinds.profile import warm

__all__ = ["start"]


def start(data: Any) -> None:
    warm.prefetch(data)
