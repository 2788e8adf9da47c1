"""Traces a hostile user would write (issue 29): nesting past the recursion limit, numbers
past int64 and float, gzip bombs; and the routes and queries that look at each profile.
Shared by the regression tests, the S3 tests and the fuzz suite."""

from __future__ import annotations

import gzip

from tests.kinds.profile import traces

#: Every profile route, with the query each needs besides ?run=&tag=.
ROUTES = {"overview": {}, "operators": {}, "kernels": {}, "timeline": {}, "memory": {},
          "search": {"q": "mat"}, "event": {"id": "3"}, "compare": {}}
TOO_DEEP = "nests values too deeply"
BOMB = "decompression bomb"
BIG = "1" + "0" * 400  # an integer no float holds
STEP_20 = "123456789012345678901"  # a step number no int64 holds


def base() -> bytes:
    return traces.dump(traces.ours())


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def deep_args(depth: int = 5000) -> bytes:
    """One operator's args nested ``depth`` levels (its shapes too)."""
    return base().replace(b'"Input Dims": [[32, 64], [64, 16]]',
                          b'"Input Dims": ' + nested(depth), 1)


def deep_meta(depth: int = 5000) -> bytes:
    """A top-level key of the environment nested ``depth`` levels."""
    raw = base()
    return raw[:raw.rindex(b"}")] + b', "metadata": {"x": ' + nested(depth) + b"}}"


def replace(raw: bytes, old: str, new: str, count: int = 1) -> bytes:
    assert old.encode() in raw, old
    return raw.replace(old.encode(), new.encode(), count)


def huge_numbers() -> dict[str, bytes]:
    """Each class of absurd number the parser meets, one trace each."""
    raw = base()
    return {
        "step20": replace(raw, "ProfilerStep#6", f"ProfilerStep#{STEP_20}"),
        "ts_int": replace(raw, '"ts": 1000.0', f'"ts": {BIG}'),
        "dur_int": replace(raw, '"dur": 40.0', f'"dur": {BIG}'),
        "pid_int": replace(raw, '"pid": 1,', f'"pid": {BIG},', 3),
        "tid_int": replace(raw, '"tid": 10,', f'"tid": -{BIG},', 3),
        "bytes_int": replace(raw, '"Bytes": 4096', f'"Bytes": {BIG}'),
        "total_int": replace(raw, '"Total Allocated": 4096', f'"Total Allocated": {BIG}'),
        "device_int": replace(raw, '"Device Id": -1', f'"Device Id": {BIG}'),
        "shape_int": replace(raw, "[[32, 64], [64, 16]]", f"[[{BIG}, 64]]"),
        "ts_far": replace(replace(raw, '"ts": 1005.0', '"ts": -1.7e308'),
                          '"ts": 1000.0', '"ts": 1.7e308'),
        "dur_neg": replace(raw, '"dur": 40.0', '"dur": -40.0', 3),
        "dur_nan": replace(raw, '"dur": 40.0', '"dur": NaN', 3),
        "dur_huge": replace(raw, '"dur": 40.0', '"dur": 1.7e308', 3),
    }


def bomb(inflated: int = 70 << 20) -> bytes:
    """Valid trace JSON, mostly blanks: ``inflated`` bytes in about a thousandth of that."""
    head, tail = b'{"traceEvents": [', b"]}"
    return gzip.compress(head + b" " * (inflated - len(head) - len(tail)) + tail, 9)
