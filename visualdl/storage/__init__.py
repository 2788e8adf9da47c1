"""Where logs are: locations (a local folder or any fsspec URL, :mod:`.location`) that list
files and read their bytes for the sources, knowing no log format; and the small layer
between visualdl and fsspec for logs in object storage.

Local files are read with ``open`` and written with ``os.write``. A logdir that is a URL
(``s3://bucket/prefix``, ``gs://``, ``az://``, ``memory://``, any fsspec protocol) is
handled by :class:`~visualdl.storage.remote.RemoteFS`: one recursive listing per reload
(sizes and ETags), ranged reads, whole-object writes, and counters of every request.
``file://`` URLs are local paths and take the local code path.

fsspec and the filesystem of each protocol are optional: a URL whose implementation is
missing raises :class:`StorageUnavailable` naming the extra to install.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

__all__ = ["StorageUnavailable", "is_url", "local_path", "open_fs", "parse_storage_options",
           "EXTRAS", "File", "Location", "Stat", "open_location"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")

#: protocol -> (pip package, visualdl extra) for the filesystems users ask for most.
EXTRAS: dict[str, tuple[str, str]] = {
    "s3": ("s3fs", "s3"), "s3a": ("s3fs", "s3"),
    "gs": ("gcsfs", "gcs"), "gcs": ("gcsfs", "gcs"),
    "az": ("adlfs", "azure"), "abfs": ("adlfs", "azure"), "abfss": ("adlfs", "azure"),
}


class StorageUnavailable(ImportError):
    """The filesystem of a URL's protocol (or fsspec itself) is not installed."""


def is_url(path: Any) -> bool:
    """True for ``scheme://...`` strings other than ``file://`` (those are local paths)."""
    if not isinstance(path, str):
        return False
    match = _SCHEME.match(path)
    return bool(match) and match.group(1).lower() not in ("file", "local")


def local_path(path: str) -> str:
    """``file:///x`` -> ``/x``; anything else unchanged."""
    match = _SCHEME.match(path) if isinstance(path, str) else None
    if match and match.group(1).lower() in ("file", "local"):
        return path[match.end():] or "/"
    return path


def protocol_of(url: str) -> str:
    match = _SCHEME.match(url)
    if not match:
        raise ValueError(f"{url!r} is not a URL (scheme://...)")
    return match.group(1).lower()


def _install_hint(protocol: str) -> str:
    package, extra = EXTRAS.get(protocol, (None, None))
    if extra:
        return f'pip install "visualdl[{extra}]" (it installs {package} and fsspec)'
    return "install the fsspec implementation for it (see fsspec's list of known implementations)"


def open_fs(url: str, storage_options: Mapping[str, Any] | None = None) -> "RemoteFS":
    """The :class:`RemoteFS` for ``url``'s protocol, built with ``storage_options`` (and,
    for S3, the endpoint from ``AWS_ENDPOINT_URL``/``AWS_ENDPOINT_URL_S3`` when set).

    Raises :class:`StorageUnavailable` naming the extra to install when the protocol's
    filesystem (or fsspec) is missing, and ``ValueError`` for a protocol fsspec does not
    know."""
    protocol = protocol_of(url)
    try:
        import fsspec
        from fsspec.registry import known_implementations
    except ImportError as exc:
        raise StorageUnavailable(
            f"{url}: logs in object storage need fsspec, which is not installed: "
            f"{_install_hint(protocol)}") from exc
    if protocol not in known_implementations and protocol not in fsspec.available_protocols():
        raise ValueError(f"{url}: unknown storage protocol {protocol!r} (fsspec knows "
                         f"{', '.join(sorted(fsspec.available_protocols())[:12])}, ...)")
    try:
        cls = fsspec.get_filesystem_class(protocol)
    except ImportError as exc:
        raise StorageUnavailable(
            f"{url}: the {protocol}:// filesystem is not installed: {_install_hint(protocol)}"
        ) from exc
    from visualdl.storage.remote import RemoteFS

    options = dict(storage_options or {})
    if protocol in ("s3", "s3a"):
        options = _s3_options(options)
    try:
        fs = cls(**options)
    except TypeError as exc:  # an option the filesystem does not take
        raise ValueError(f"{url}: bad storage option for {protocol}://: {exc}") from exc
    return RemoteFS(fs, protocol)


def _s3_options(options: dict[str, Any]) -> dict[str, Any]:
    """botocore reads AWS_ENDPOINT_URL(_S3) itself since 1.31 (when the installed
    aiobotocore pins such a botocore); passing it as ``endpoint_url`` makes it work with
    every version, and an explicit option still wins."""
    import os

    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint and "endpoint_url" not in options and \
            "endpoint_url" not in options.get("client_kwargs", {}):
        options["endpoint_url"] = endpoint
    return options


def parse_storage_options(pairs: Iterable[str]) -> dict[str, Any]:
    """``["key=value", ...]`` (the CLI's ``--storage-option``) -> a dict for fsspec.

    Values are JSON when they parse as JSON (``anon=true``, ``client_kwargs={"region_name":
    "eu-west-1"}``, numbers) and strings otherwise. A dotted key sets a nested option:
    ``client_kwargs.region_name=eu-west-1``."""
    import json

    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"storage option must be key=value, got {pair!r}")
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
        target = options
        *parents, last = key.split(".")
        for part in parents:
            nested = target.setdefault(part, {})
            if not isinstance(nested, dict):
                raise ValueError(f"storage option {key!r}: {part!r} is already a value")
            target = nested
        target[last] = value
    return options


from visualdl.storage.remote import RemoteFS  # noqa: E402  (fsspec is imported lazily there)
from visualdl.storage.location import File, Location, Stat, open_location  # noqa: E402
