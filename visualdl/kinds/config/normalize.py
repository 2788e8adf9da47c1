"""What ``add_config`` accepts, turned into one JSON-ready nested dict in the caller's thread.

Every value is checked where it sits, so a bad one is refused at the call with its dotted
key (``config['model.act']``) rather than failing later in the writer's thread or in the
browser: only ``None``, booleans, integers, finite floats, strings, and dicts (string keys)
and lists of those are kept.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import math
import os
from collections.abc import Mapping
from typing import Any

__all__ = ["to_nested", "MAX_DEPTH", "MAX_BYTES"]

MAX_DEPTH = 64  # deeper than any real config; also bounds the recursion
MAX_BYTES = 16 << 20  # the JSON of one config: a run's config is read whole on every view


def to_nested(config: Any) -> dict[str, Any]:
    """``config`` as a nested dict of JSON values; ``TypeError``/``ValueError`` naming the
    key of the first value that is not one (or the file that could not be read)."""
    top = _plain(_top(config), "")
    if not isinstance(top, Mapping):
        raise TypeError(f"config must be a mapping at its top level, got {type(top).__name__}")
    nested = _walk(top, "", set(), 0)
    size = len(json.dumps(nested, ensure_ascii=False, allow_nan=False))
    if size > MAX_BYTES:
        raise ValueError(f"config is {size} bytes as JSON; at most {MAX_BYTES} are recorded")
    return nested


def _top(config: Any) -> Any:
    """The mapping behind what the caller passed (a file is read here)."""
    if isinstance(config, (str, os.PathLike)):
        return _read_file(os.fspath(config))
    if _is_omegaconf(config):
        from omegaconf import OmegaConf  # only reached when the caller has omegaconf

        try:
            return OmegaConf.to_container(config, resolve=True)
        except Exception as exc:  # an interpolation that does not resolve, a missing value
            raise ValueError(f"config: the OmegaConf config does not resolve: {exc}") from None
    return config


def _read_file(path: str) -> Any:
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".json", ".yaml", ".yml"):
        raise ValueError(f"config file {path!r}: expected a .json, .yaml or .yml file")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise ValueError(f"config file {path!r} could not be read: {exc}") from None
    try:
        if ext == ".json":
            return json.loads(text)
        import yaml  # PyYAML: a dependency for exactly this

        return yaml.safe_load(text)
    except Exception as exc:  # json.JSONDecodeError, yaml.YAMLError
        raise ValueError(f"config file {path!r} is not valid {ext[1:].upper()}: {exc}") from None


def _is_omegaconf(value: Any) -> bool:
    """A DictConfig/ListConfig, recognised without importing omegaconf (not a dependency)."""
    return type(value).__module__.split(".")[0] == "omegaconf"


def _name(path: str) -> str:
    return f"config[{path!r}]" if path else "config"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(value: Any, path: str, seen: set[int], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ValueError(f"{_name(path)}: nested more than {MAX_DEPTH} levels deep")
    value = _plain(value, path)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{_name(path)} is {value}: only finite numbers are recorded")
        return value
    if id(value) in seen:
        raise ValueError(f"{_name(path)} refers back to a value that contains it (a cycle)")
    seen.add(id(value))
    try:
        if isinstance(value, Mapping):
            out = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise TypeError(f"{_name(path)} has the key {key!r} "
                                    f"({type(key).__name__}): config keys must be strings")
                out[key] = _walk(item, _join(path, key), seen, depth + 1)
            return out
        return [_walk(item, _join(path, str(i)), seen, depth + 1)
                for i, item in enumerate(value)]
    finally:
        seen.discard(id(value))


def _plain(value: Any, path: str) -> Any:
    """A value, a dict or a list: containers and records of other types unwrapped."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, argparse.Namespace):
        return vars(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if _is_omegaconf(value):
        return _top(value)
    if isinstance(value, (Mapping, list, tuple)):
        return value
    if isinstance(value, (set, frozenset)):
        raise TypeError(f"{_name(path)} is a {type(value).__name__}: a set has no order; "
                        "pass a sorted list")
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # numpy scalars and arrays
        return value.tolist()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"{_name(path)} is a {type(value).__name__}: a config holds only "
                    "numbers, strings, booleans, None, and dicts and lists of them")
