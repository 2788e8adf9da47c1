"""Each run's health for the routes that list runs (``/api/runs``, ``/api/runs/table``):
its state and first non-finite scalar, from the provider (see ``reader.run_health``)."""

from __future__ import annotations

from typing import Any

__all__ = ["run_states"]


def run_states(data: Any, names: list[str]) -> dict[str, Any]:
    """``{run: {"state", "nan", "last_update", "interval"}}`` of the runs whose provider
    can tell (a provider not reading files tells nothing)."""
    out = {}
    for name in names:
        try:
            health = data.run_health(name)
        except KeyError:  # gone since the names were listed
            continue
        if health is not None:
            out[name] = health.as_json()
    return out
