"""The visualdl server: ``create_app`` builds the Flask app, ``cli.main`` runs it.

``create_app`` loads on first use (PEP 562) so that ``visualdl --logdir`` can start reading
the logdir (``visualdl.server.reader_provider``) before Flask is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["create_app"]

if TYPE_CHECKING:
    from visualdl.server.app import create_app


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from visualdl.server.app import create_app

        return create_app
    raise AttributeError(f"module 'visualdl.server' has no attribute {name!r}")
