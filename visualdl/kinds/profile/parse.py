"""Chrome trace-event JSON (ours or PyTorch's Kineto traces) into compact numpy columns.

A big trace as Python dicts would take several times its JSON's size. So the event array
is decoded a piece at a time (pieces cut between two events by a byte search and proven
well cut by their decoding, see ``_parse_pieces``; or, when that fails, the array split
into raw slices by msgspec and joined again into batches) into small typed structs whose
fields go straight into columns (ts, dur, name id, category id, track id, phase), and the
piece is dropped. Each event's ``args`` are kept as their JSON bytes, decoded only when a
view asks for one event. The events are added in two halves, which a caller may have built
at the same time (:func:`halves_by`).

Without msgspec (the ``profiler`` extra) the standard ``json`` module parses the trace
whole: slower and hungrier, same result.

What PyTorch writes that is not strict JSON is tolerated: ``NaN``/``Infinity`` and trailing
commas are repaired on a second try; a file cut short says so. What no profiler writes is
refused or dropped, never raised as anything but :class:`TraceError`: values nested deeper
than the decoders' recursion limit refuse the trace (the message says so); a timestamp too
big for a float drops its event (counted as malformed), such a duration counts as missing.

Times far from zero (Kineto's Unix-epoch microseconds, about 1.7e15, or its offsets from
``baseTimeNanoseconds``, about 5e12) keep less than a nanosecond in a float64: at 1.7e15 a
float holds quarters of a microsecond, and ``ts + dur`` there makes a leaf's self time
exceed its total. So when the first ``ts`` is that far out, every ``ts`` is decoded exactly
(a ``Decimal``) and kept as microseconds after a whole-microsecond ``base`` (the first
``ts``'s integer part): :attr:`Columns.base`, which views report so that any time can be
checked against the file.
"""

from __future__ import annotations

import json
import math
import mmap
import re
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from decimal import Decimal, InvalidOperation
from itertools import islice
from operator import attrgetter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Union

import numpy as np

try:  # the fast path: optional extra "profiler"
    import msgspec
except ImportError:  # pragma: no cover - exercised where msgspec is absent
    msgspec = None

__all__ = ["TraceError", "Misaligned", "Columns", "Builder", "parse_trace", "halves_by",
           "add_events", "add_one_by_one", "PH_COMPLETE", "PH_INSTANT", "PH_COUNTER", "BATCH",
           "CHUNKED_BYTES", "PIECE_BYTES", "TOO_DEEP", "WIDE_TS", "time_base"]

PH_COMPLETE, PH_INSTANT, PH_COUNTER = 0, 1, 2
#: Events decoded into columns at a time (the columns' temporaries stay small).
BATCH = 50_000
_NAN = float("nan")
_FAST_PH = {"X": 0, "i": 1, "I": 1, "C": 2}
_DTYPES = {"ts": np.float64, "dur": np.float64, "name": np.int32, "cat": np.int32,
           "track": np.int32, "ph": np.uint8, "args_len": np.int32}
_NON_FINITE = re.compile(rb'(?<=[:\[,])(\s*)(-?Infinity|NaN)(?=\s*[,\]}])')
_TRAILING_COMMA = re.compile(rb",(\s*[\]}])")
_NOT_SPACE = re.compile(rb"\S")
#: Where one event ends and the next begins, or so it seems (see _parse_pieces).
_BOUNDARY = re.compile(rb"\}[ \t\r\n]*,[ \t\r\n]*\{")
_OPEN = b'{"traceEvents":['
#: From this many microseconds on, a float64 keeps less than a nanosecond: such times are
#: kept relative to a base (see the module's docstring).
WIDE_TS = 1 << 32
_FIRST_TS = re.compile(rb'"ts"\s*:\s*(-?\d{1,30})')
#: How far into the text the first ``ts`` is looked for (Kineto writes its header first).
_BASE_WINDOW = 1 << 20
#: Traces from this size are decoded in pieces of about PIECE_BYTES (see _parse_pieces).
CHUNKED_BYTES = 1 << 20
PIECE_BYTES = 8 << 20
#: Top-level keys shown as the run's environment (Kineto's, and our recorder's).
META_KEYS = ("schemaVersion", "deviceProperties", "distributedInfo", "env", "environment",
             "visualdl_env",  # vf.profiler's (visualdl/framework/profiler/trace.py)
             "metadata", "host_name", "hostname", "trace_id", "record_shapes",
             "profile_memory", "with_stack", "with_flops", "baseTimeNanoseconds",
             "displayTimeUnit", "cuda_runtime_version", "cuda_driver_version",
             "cupti_version", "framework", "framework_version", "torch_version", "version")


class TraceError(ValueError):
    """A trace that cannot be read; the message says why, in a user's words."""


#: What a trace nested past the decoders' recursion limit is refused with.
TOO_DEEP = ("the trace nests values too deeply (an event's args or a top-level value more "
            "than about {:,} levels deep)")


@dataclass
class Columns:
    """Every timed event of a trace (complete ``X``, instant ``i``/``I``, counter ``C``),
    in file order; ``B``/``E`` pairs are joined into complete events."""

    ts: np.ndarray            # float64, microseconds as written, less ``base``
    dur: np.ndarray           # float64 (0 for instants and counters)
    name: np.ndarray          # int32 into names
    cat: np.ndarray           # int32 into cats
    track: np.ndarray         # int32 into tracks
    ph: np.ndarray            # uint8: PH_COMPLETE, PH_INSTANT, PH_COUNTER
    args_start: np.ndarray    # int64 offset into args_blob
    args_len: np.ndarray      # int32 (0: no args)
    args_blob: bytes
    names: list[str]
    cats: list[str]
    tracks: list[tuple[Any, Any]]                       # (pid, tid) as written
    process_names: dict[Any, str] = field(default_factory=dict)
    thread_names: dict[tuple[Any, Any], str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)  # META_KEYS found, decoded
    warnings: list[str] = field(default_factory=list)
    base: int = 0             # whole microseconds taken off every ts (0: none)


def time_base(text: bytes | mmap.mmap) -> int:
    """The whole microseconds to take off every ``ts`` of ``text``: the integer part of the
    first of its first few ``ts`` that is :data:`WIDE_TS` or more away from zero (a
    metadata event may say 0), else 0."""
    for found in islice(_FIRST_TS.finditer(text, 0, _BASE_WINDOW), 64):
        first = int(found.group(1))
        if abs(first) >= WIDE_TS:
            return first
    return 0


if msgspec is not None:
    class _Event(msgspec.Struct, gc=False):  # what well-formed traces hold: decoded fast, typed
        ph: str = ""
        name: str = ""
        cat: str = ""
        pid: Union[int, str] = 0
        tid: Union[int, str] = 0
        ts: float = _NAN
        dur: float = -1.0
        args: msgspec.Raw = msgspec.Raw(b"")

    class _LooseEvent(msgspec.Struct, gc=False):  # anything else, checked one by one
        ph: Any = ""
        name: Any = ""
        cat: Any = ""
        pid: Any = 0
        tid: Any = 0
        ts: Any = None
        dur: Any = None
        args: msgspec.Raw = msgspec.Raw(b"")

    class _WideEvent(msgspec.Struct, gc=False):  # the same, ts exact (see time_base)
        ph: str = ""
        name: str = ""
        cat: str = ""
        pid: Union[int, str] = 0
        tid: Union[int, str] = 0
        ts: Decimal = Decimal("NaN")
        dur: float = -1.0
        args: msgspec.Raw = msgspec.Raw(b"")

    _Top = msgspec.defstruct("_Top", [("traceEvents", list[msgspec.Raw], [])] + [
        (key, msgspec.Raw, msgspec.Raw(b"")) for key in META_KEYS])
    #: the same, its events left as they are written (where the array starts and ends)
    _TopRaw = msgspec.defstruct("_TopRaw", [("traceEvents", msgspec.Raw, msgspec.Raw(b""))] + [
        (key, msgspec.Raw, msgspec.Raw(b"")) for key in META_KEYS])
    _decode_top_raw = msgspec.json.Decoder(_TopRaw).decode
    _decode_events = msgspec.json.Decoder(list[_Event]).decode
    _decode_loose = msgspec.json.Decoder(list[_LooseEvent]).decode
    _decode_wide = msgspec.json.Decoder(list[_WideEvent]).decode
    _decode_loose_wide = msgspec.json.Decoder(list[_LooseEvent], float_hook=Decimal).decode
    _decode_top = msgspec.json.Decoder(_Top).decode
    _decode_list = msgspec.json.Decoder(list[msgspec.Raw]).decode
    _decode_any = msgspec.json.Decoder().decode


class _Interner(dict):
    """``interner[key]``: the key's id, a new one (its rank of arrival) when unseen. Looked
    up through ``map(interner.__getitem__, ...)``, so a hit runs no Python code."""

    def __missing__(self, key: Any) -> int:
        value = self[key] = len(self)
        return value


class _PhCodes(dict):
    def __missing__(self, key: Any) -> int:
        return _SLOW


_SLOW = 9  # a phase code for events added one by one (metadata, B/E, flows...)
_PH_CODE = _PhCodes(_FAST_PH)
_get_ph, _get_ts, _get_dur, _get_name, _get_cat, _get_pid, _get_tid, _get_args = (
    attrgetter(k) for k in ("ph", "ts", "dur", "name", "cat", "pid", "tid", "args"))


class Builder:
    """Accumulates columns batch by batch, interning names, categories and tracks."""

    def __init__(self, base: int = 0) -> None:
        self.set_base(base)
        self.names: dict[str, int] = _Interner()
        self.cats: dict[str, int] = _Interner()
        self.tracks: dict[tuple[Any, Any], int] = {}
        self.pids: dict[Any, int] = _Interner()
        self.tids: dict[Any, int] = _Interner()
        self.cols: dict[str, list] = {k: [] for k in ("ts", "dur", "name", "cat", "track", "ph",
                                                      "args_len")}
        self.args: list[bytes] = []
        self.process_names: dict[Any, str] = {}
        self.thread_names: dict[tuple[Any, Any], str] = {}
        self.open: dict[tuple[Any, Any], list] = {}  # B events waiting for their E
        self.no_dur = 0
        self.bad = 0
        #: When a list: events that need the one-by-one path (metadata, B/E pairs, odd
        #: values) are kept here, as :meth:`add`'s arguments, instead of added: the second
        #: half of a trace built apart (its B/E pairs may straddle the halves), whose
        #: deferred events the first half's builder adds after its own.
        self.deferred: list[tuple] | None = None

    def set_base(self, base: int) -> None:
        """Keep every ts as microseconds after ``base`` (see :func:`time_base`), decoded
        exactly when ``base`` is not 0."""
        self.base = base
        self._shift = Decimal(base).__rsub__  # (x - base, exact)
        if msgspec is not None:
            self.decode_events = _decode_wide if base else _decode_events
            self.decode_loose = _decode_loose_wide if base else _decode_loose

    def take(self, *event: Any) -> None:
        """:meth:`add`, or keep the event for later when deferring."""
        if self.deferred is not None:
            self.deferred.append(event)
        else:
            self.add(*event)

    def add(self, ph: str, name: Any, cat: Any, pid: Any, tid: Any, ts: Any, dur: Any,
            args: bytes) -> None:
        if ph == "M":
            self._metadata(name, pid, tid, args)
            return
        if ph not in ("X", "i", "I", "C", "B", "E", "R"):
            return  # flows, async and object events: not drawn
        ts = _number(ts) if not self.base else _relative(ts, self.base)
        if ts is None or ts != ts:
            self.bad += 1
            return
        key = (_key(pid), _key(tid))
        if ph == "B":
            self.open.setdefault(key, []).append((name, cat, ts, args))
            return
        if ph == "E":
            stack = self.open.get(key)
            if not stack:
                self.bad += 1
                return
            name, cat, start, args = stack.pop()
            ph, dur, ts = "X", ts - start, start
        code = PH_COMPLETE if ph == "X" else (PH_COUNTER if ph == "C" else PH_INSTANT)
        if code == PH_COMPLETE:
            dur = _number(dur)
            if dur is None or dur != dur:
                self.no_dur += 1
                dur = 0.0
            elif dur < 0:
                self.bad += 1
                dur = 0.0
        else:
            dur = 0.0
        cols = self.cols
        names = self.names
        name = name if isinstance(name, str) else str(name)
        cat = cat if isinstance(cat, str) else ("" if cat is None else str(cat))
        cols["ts"].append(np.array([ts], np.float64))
        cols["dur"].append(np.array([dur], np.float64))
        cols["name"].append(np.array([names.setdefault(name, len(names))], np.int32))
        cols["cat"].append(np.array([self.cats.setdefault(cat, len(self.cats))], np.int32))
        cols["track"].append(np.array([self.tracks.setdefault(key, len(self.tracks))], np.int32))
        cols["ph"].append(np.array([code], np.uint8))
        cols["args_len"].append(np.array([len(args)], np.int32))
        self.args.append(args)

    def add_batch(self, events: list) -> None:
        """Typed events (``_Event``): complete, instant and counter events go into the
        columns through ``map`` and interning dicts (no Python code per event); the rare
        others (M, B/E, odd values) one by one."""
        phs = np.fromiter(map(_PH_CODE.__getitem__, map(_get_ph, events)), np.uint8,
                          len(events))
        slow = np.flatnonzero(phs == _SLOW)
        if len(slow):
            for i in slow:
                e = events[i]
                self.take(e.ph, e.name, e.cat, e.pid, e.tid, e.ts, e.dur, bytes(e.args))
            keep = np.flatnonzero(phs != _SLOW)
            fast = [events[i] for i in keep]
            code = phs[keep]
        else:
            fast, code = events, phs
        if not fast:
            return
        n = len(fast)
        if self.base:  # exact Decimals, less the base (map: no Python code per event)
            ts = np.fromiter(map(float, map(self._shift, map(_get_ts, fast))), np.float64, n)
            ts[np.isinf(ts)] = _NAN  # (past a float's range: malformed, as below)
        else:
            ts = np.fromiter(map(_get_ts, fast), np.float64, n)
        dur = np.fromiter(map(_get_dur, fast), np.float64, n)
        good = ~np.isnan(ts)
        complete = code == 0
        missing = complete & (dur < 0) & good
        self.no_dur += int(missing.sum())
        dur[~complete | (dur < 0)] = 0.0
        if not good.all():
            self.bad += int((~good).sum())
            keep = np.flatnonzero(good)
            fast = [fast[i] for i in keep]
            ts, dur, code = ts[keep], dur[keep], code[keep]
            n = len(fast)
        cols = self.cols
        cols["ts"].append(ts)
        cols["dur"].append(dur)
        cols["ph"].append(code)
        cols["name"].append(np.fromiter(map(self.names.__getitem__, map(_get_name, fast)),
                                        np.int32, n))
        cols["cat"].append(np.fromiter(map(self.cats.__getitem__, map(_get_cat, fast)),
                                       np.int32, n))
        # threads: pid and tid interned apart, paired with numpy (no tuple per event)
        pids, tids = self.pids, self.tids
        pid = np.fromiter(map(pids.__getitem__, map(_get_pid, fast)), np.int64, n)
        tid = np.fromiter(map(tids.__getitem__, map(_get_tid, fast)), np.int64, n)
        pairs, inverse = np.unique(pid << 32 | tid, return_inverse=True)
        pid_of, tid_of = list(pids), list(tids)
        local = np.array([self.tracks.setdefault((pid_of[int(k) >> 32], tid_of[int(k) & 0xFFFFFFFF]),
                                                 len(self.tracks)) for k in pairs], np.int32)
        cols["track"].append(local[inverse.ravel()])
        raws = list(map(_get_args, fast))
        cols["args_len"].append(np.fromiter(map(len, raws), np.int32, n))
        self.args.append(b"".join(raws))

    def _metadata(self, name: Any, pid: Any, tid: Any, args: bytes) -> None:
        if name not in ("process_name", "thread_name") or not args:
            return
        try:
            value = json.loads(args).get("name")
        except (ValueError, AttributeError, RecursionError):
            return
        if not isinstance(value, str):
            return
        if name == "process_name":
            self.process_names[_key(pid)] = value
        else:
            self.thread_names[(_key(pid), _key(tid))] = value

    def column(self, key: str) -> np.ndarray:
        """One column so far, in one array."""
        parts = self.cols[key]
        return np.concatenate(parts) if parts else np.zeros(0, _DTYPES[key])

    def finish(self, meta: dict[str, Any]) -> Columns:
        for key, stack in self.open.items():  # B without E: ends at the last timestamp
            self.bad += len(stack)
        c = {k: self.column(k) for k in self.cols}
        n = len(c["ts"])
        args_len = c["args_len"]
        args_start = np.zeros(n, np.int64)
        if n:
            np.cumsum(args_len[:-1], out=args_start[1:])
        warnings = []
        if self.no_dur:
            warnings.append(f"{self.no_dur:,} complete events had no dur (shown as 0 long)")
        if self.bad:
            warnings.append(f"{self.bad:,} events were malformed and skipped")
        return Columns(
            ts=c["ts"], dur=c["dur"], name=c["name"], cat=c["cat"], track=c["track"],
            ph=c["ph"],
            args_start=args_start, args_len=args_len, args_blob=b"".join(self.args),
            names=list(self.names), cats=list(self.cats), tracks=list(self.tracks),
            process_names=self.process_names, thread_names=self.thread_names,
            meta=meta, warnings=warnings, base=self.base,
        )


def _number(value: Any) -> float | None:
    """A timestamp or duration as a float; None when it is not a number, or an integer too
    big for a float (JSON allows any number of digits)."""
    if not isinstance(value, (int, float, Decimal)):
        return None
    try:
        found = float(value)
    except OverflowError:
        return None
    return None if math.isinf(found) and not isinstance(value, float) else found


def _relative(value: Any, base: int) -> float | None:
    """A timestamp less ``base``, exact before it is rounded to a float (see time_base);
    None as :func:`_number` says."""
    if isinstance(value, float):
        return value - base if math.isfinite(value) else None
    if not isinstance(value, (int, Decimal)) or isinstance(value, bool):
        return None
    try:
        found = float(Decimal(value) - base)
    except (InvalidOperation, OverflowError):
        return None
    return found if math.isfinite(found) else None


def _key(value: Any) -> Any:
    """pid/tid as a hashable, JSON-friendly value (Kineto writes ints and strings)."""
    if isinstance(value, (int, str)):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return str(value)


#: What adds the second half of the events, if not the first half's builder after it (see
#: halves_by).
_second_half: ContextVar[Callable[[Callable[[Builder], None], int], Any] | None] = \
    ContextVar("second_half", default=None)


@contextmanager
def halves_by(start: Callable[[Callable[[Builder], None], int], Any]) -> Iterator[None]:
    """Inside: the second half of each trace's events is handed to ``start(fill, size)``
    (``fill(builder)`` adds that half to a builder; ``size``: its JSON bytes), which
    returns a half with ``join(builder, fill)``, adding it to the first half's builder,
    and ``close()``. So that the halves can be built at the same time; where is the
    caller's choice (:func:`visualdl.kinds.profile.forked.start`)."""
    token = _second_half.set(start)
    try:
        yield
    finally:
        _second_half.reset(token)


def parse_trace(raw: bytes | mmap.mmap) -> Columns:
    """Parse a Chrome trace (an object with ``traceEvents``, or a bare array of events):
    its JSON bytes, or a file mapped into memory (``mmap``, read without a copy)."""
    text = raw if isinstance(raw, (bytes, mmap.mmap)) else bytes(raw)
    head = _first_byte(text)
    if not head:
        raise TraceError("the trace is empty")
    if head not in (b"{", b"["):
        raise TraceError("the trace is not JSON (it does not start with { or [)")
    try:
        return _parse(text)
    except TraceError:
        raise
    except RecursionError:
        raise TraceError(TOO_DEEP.format(sys.getrecursionlimit())) from None
    except ValueError as first:
        text = bytes(text)  # (a mapped file: the repairs need bytes)
        repaired = _TRAILING_COMMA.sub(rb"\1", _NON_FINITE.sub(rb"\1null", text))
        if repaired != text:
            try:
                return _parse(repaired)
            except ValueError:
                pass
            except RecursionError:
                raise TraceError(TOO_DEEP.format(sys.getrecursionlimit())) from None
        raise TraceError(_explain(text, first)) from None


def _first_byte(text: bytes | mmap.mmap) -> bytes:
    """The text's first byte that is not white space (b"" when none), without a copy of
    the text (it may be a big mapped file)."""
    found = _NOT_SPACE.search(text)
    return found.group() if found else b""


def _explain(text: bytes, err: Exception) -> str:
    tail = text.rstrip()[-1:]
    if tail not in (b"}", b"]"):
        return "the trace is truncated (its JSON ends early: still being written, or cut off)"
    return f"the trace is not valid JSON: {err}"


def _parse(text: bytes | mmap.mmap) -> Columns:
    if msgspec is None:
        return _parse_json(bytes(text))
    return _parse_msgspec(text)


class Misaligned(Exception):
    """The trace was cut into pieces somewhere else than between two events: parse it the
    careful way (not a ValueError: nothing is wrong with the trace)."""


def _parse_msgspec(text: bytes | mmap.mmap) -> Columns:
    if len(text) >= CHUNKED_BYTES:
        try:
            return _parse_pieces(text)
        except Misaligned:
            pass
    try:
        if _first_byte(text) == b"[":
            raws, meta = _decode_list(text), {}
        else:
            top = _decode_top(text)
            raws = top.traceEvents
            meta = {}
            for key in META_KEYS:
                value = getattr(top, key)
                if len(value):
                    meta[key] = _decode_any(value)
    except msgspec.ValidationError as exc:
        raise TraceError(f"the trace's JSON is not a Chrome trace: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ValueError(str(exc)) from None
    mid = len(raws) // 2
    return _build(meta, lambda b: add_events(b, raws[:mid]),
                  lambda b: add_events(b, raws[mid:]), len(text) if mid else 0,
                  time_base(text))


def _parse_pieces(text: bytes | mmap.mmap) -> Columns:
    """The events decoded a piece of the text at a time, the pieces cut where one event
    ends and the next begins (``}, {``), found by a byte search: no split of the whole
    array into one raw slice per event, and no joining of those again into batches.

    A cut can also fall inside a string, inside an event, or in another array of the
    document; each piece's decoding proves it did not: the first piece must close the
    ``traceEvents`` array exactly where it was cut (checked by the address msgspec gives
    its raw value), the last must open it, and every piece in between must decode as a
    list of objects, which it only does when it starts with a whole event and ends with
    one. Anything else raises :class:`Misaligned`."""
    meta, pieces = _cut(text)
    mid = (len(pieces) + 1) // 2
    size = pieces[-1][1] - pieces[mid][0] if mid < len(pieces) else 0
    return _build(meta, lambda b: _add_pieces(b, text, pieces[:mid]),
                  lambda b: _add_pieces(b, text, pieces[mid:]), size, time_base(text))


def _cut(text: bytes | mmap.mmap) -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """``(meta, pieces)``: each piece ``(lo, hi)`` a run of whole events, ``text[lo:hi]``."""
    n = len(text)
    parts = max(2, n // PIECE_BYTES)
    cuts: list[tuple[int, int]] = []  # (end of an event, start of the next)
    at = 0
    for j in range(1, parts):
        found = _BOUNDARY.search(text, max(at, n * j // parts))
        if found is None:
            break
        cuts.append((found.start() + 1, found.end() - 1))
        at = found.end()
    if not cuts:
        raise Misaligned()
    first = _NOT_SPACE.search(text)
    if first.group() == b"[":  # a bare array of events: the pieces' decoding decides
        lo = first.start() + 1
        end = text[-4096:]
        kept = end.rstrip()
        if not kept.endswith(b"]"):  # (or more than 4 KB of trailing blanks)
            raise Misaligned()
        hi = n - (len(end) - len(kept)) - 1
        meta: dict[str, Any] = {}
    else:
        lo, meta = _head(text, cuts[0][0])
        hi, after = _tail(text, cuts[-1][1])
        meta.update(after)
    bounds = [lo] + [b for _, b in cuts]
    ends = [c for c, _ in cuts] + [hi]
    return meta, list(zip(bounds, ends))


def _head(text: bytes | mmap.mmap, end: int) -> tuple[int, dict[str, Any]]:
    """Where the events begin, and the keys before them: the text up to the first cut,
    closed, must be a trace whose ``traceEvents`` is the array closed there."""
    doc = text[:end] + b"]}"
    top = _decode_piece(doc, _decode_top_raw)
    events = top.traceEvents
    start = _address(events, doc)
    if len(events) < 2 or start + len(events) != end + 1:
        raise Misaligned()
    return start + 1, _meta(top)


def _tail(text: bytes | mmap.mmap, begin: int) -> tuple[int, dict[str, Any]]:
    """Where the events end, and the keys after them: the text from the last cut, opened
    as ``{"traceEvents":[``, must be a trace whose (only) ``traceEvents`` is that one."""
    doc = _OPEN + text[begin:]
    top = _decode_piece(doc, _decode_top_raw)
    events = top.traceEvents
    if len(events) < 2 or _address(events, doc) != len(_OPEN) - 1:
        raise Misaligned()
    return begin + len(events) - 2, _meta(top)


def _decode_piece(doc: bytes, decode: Callable[[bytes], Any]) -> Any:
    try:
        return decode(doc)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise Misaligned() from None


def _address(raw: Any, doc: bytes) -> int:
    """Where msgspec's raw value (a view into ``doc``, not a copy) starts in ``doc``."""
    return np.frombuffer(raw, np.uint8).ctypes.data - np.frombuffer(doc, np.uint8).ctypes.data


def _meta(top: Any) -> dict[str, Any]:
    out = {}
    for key in META_KEYS:
        value = getattr(top, key)
        if len(value):
            out[key] = _decode_any(value)
    return out


def _add_pieces(builder: Builder, text: bytes | mmap.mmap, pieces: list) -> None:
    for lo, hi in pieces:
        doc = b"[" + text[lo:hi] + b"]"
        try:
            events = builder.decode_events(doc)
        except msgspec.ValidationError:  # odd values somewhere: this piece the slow way
            add_one_by_one(builder, _decode_piece(doc, _decode_list))
            continue
        except msgspec.DecodeError:
            raise Misaligned() from None
        for start in range(0, len(events), BATCH):
            builder.add_batch(events[start:start + BATCH])
        del events, doc


def _build(meta: dict[str, Any], first: Callable[[Builder], None],
           second: Callable[[Builder], None], size: int, base: int = 0) -> Columns:
    """The columns of both halves of the events (each added by ``first``/``second``;
    ``size``: the second's JSON bytes, 0 when it has none), the second by the
    :func:`halves_by` in force, if any; every ts less ``base`` (see time_base)."""
    builder = Builder(base)
    start = _second_half.get()

    def second_half(b: Builder) -> None:  # (a builder made elsewhere: told the base)
        b.set_base(base)
        second(b)

    half = start(second_half, size) if start is not None and size else None
    try:
        first(builder)
        if half is None:
            second(builder)
        else:
            half.join(builder, second)
    finally:
        if half is not None:
            half.close()
    return builder.finish(meta)


def add_events(builder: Builder, raws: list) -> None:
    """Events (raw JSON slices) into ``builder``, a batch at a time."""
    for start in range(0, len(raws), BATCH):
        batch = raws[start:start + BATCH]
        text = b"[" + b",".join(batch) + b"]"
        try:
            builder.add_batch(builder.decode_events(text))
        except msgspec.ValidationError:  # odd values somewhere: this batch the slow way
            add_one_by_one(builder, batch)
        except msgspec.DecodeError as exc:
            raise ValueError(str(exc)) from None
        del batch, text


def add_one_by_one(builder: Builder, batch: list) -> None:
    """Raw events through the careful path (any value types; metadata, B/E pairs)."""
    take = builder.take
    for e in _decode_one_by_one(batch, builder):
        take(e.ph, e.name, e.cat, e.pid, e.tid, e.ts, e.dur, bytes(e.args))


def _decode_one_by_one(batch: list, builder: Builder) -> list:
    """A batch holding an event that is not an object: keep the good ones."""
    out = []
    for raw in batch:
        try:
            out.extend(builder.decode_loose(b"[" + bytes(raw) + b"]"))
        except (msgspec.ValidationError, msgspec.DecodeError):
            builder.bad += 1
    return out


def _parse_json(text: bytes) -> Columns:
    base = time_base(text)
    try:  # (far from zero: numbers as Decimals, exact, turned back into floats but ts)
        doc = json.loads(text, parse_float=Decimal if base else None)
    except RecursionError:
        raise TraceError(TOO_DEEP.format(sys.getrecursionlimit())) from None
    except UnicodeDecodeError as exc:
        raise TraceError(f"the trace is not UTF-8 text: {exc}") from None
    if isinstance(doc, list):
        events, meta = doc, {}
    elif isinstance(doc, dict):
        events = doc.get("traceEvents", [])
        meta = {k: _floats(doc[k]) if base else doc[k] for k in META_KEYS if k in doc}
    else:
        raise TraceError("the trace's JSON is neither an object nor an array")
    if not isinstance(events, list):
        raise TraceError("traceEvents is not an array")
    builder = Builder(base)
    for e in events:
        if not isinstance(e, dict):
            builder.bad += 1
            continue
        args = e.get("args")
        builder.add(e.get("ph", ""), e.get("name", ""), e.get("cat", ""), e.get("pid", 0),
                    e.get("tid", 0), e.get("ts"), e.get("dur"),
                    json.dumps(args, default=float).encode() if args is not None else b"")
    return builder.finish(meta)


def _floats(value: Any) -> Any:
    """``value`` with its Decimals as floats (what json.loads gives by default)."""
    return json.loads(json.dumps(value, default=float))
