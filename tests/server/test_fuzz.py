"""Seeded fuzzing of the reader and of resuming (issue 13): a few hundred mutations of a
real record file (bit flips, zeroed, random, inserted and deleted ranges, truncation, bogus
lengths with valid length CRCs, valid frames of garbage, zero tails), each read by
``LogReader`` (whole, and in two steps as if the file were still being written) with small
and default chunks. Every case asserts:

* no exception;
* no record that ends before the first damaged byte is lost, nor any record that the
  damage left whole (found byte for byte in the mutated file, wherever it moved) when
  the file header survived;
* memory stays bounded (traced allocations, whatever lengths the damage declares);
* opening the file to resume it never cuts a record before the damage.

``bench/fuzz.py`` runs the long version of the same cases.
"""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
import tracemalloc
from dataclasses import dataclass, field

import numpy as np
import pytest

from visualdl import LogReader, LogWriter
from visualdl.format.framing import frame, masked_crc, scan
from visualdl.format.record_pb2 import Record
from visualdl.sources import base as sources_base
from visualdl.writer import record_file

MEMORY_BOUND = 8 << 20  # traced bytes a read may allocate at its peak (4 default chunks)


def make_base(run_dir: str, flushes: int = 30, seed: int = 0) -> str:
    """A record file with scalar records, blob records (images) and small events."""
    rng = np.random.default_rng(seed)
    with LogWriter(logdir=run_dir, flush_secs=1000) as w:
        for f in range(flushes):
            for i in range(50):
                step = f * 50 + i
                w.add_scalar("x", float(rng.normal()), step)
                w.add_scalar("y", float(step), step)
            if f % 5 == 0:
                w.add_text("note", f"flush {f}", f)
                w.add_image("img", rng.integers(0, 255, (6, 6, 3), dtype=np.uint8), f)
            if f % 7 == 0:
                w.add_histogram("h", rng.normal(size=100), f)
            w.flush()
        return w.file_name


def _contents(payload: bytes) -> set[tuple]:
    """What one record holds, as (kind, tag, step) keys."""
    keys = set()
    for entry in Record.FromString(payload).entries:
        kind = entry.WhichOneof("kind")
        msg = getattr(entry, kind)
        if kind == "scalars":
            keys.update(("scalar", msg.tag, int(s)) for s in msg.steps)
        elif hasattr(msg, "tag"):
            keys.add((kind, msg.tag, int(msg.step)))
    return keys


def _read_keys(reader: LogReader) -> set[tuple]:
    keys = set()
    for run in reader.runs():
        for kind, tags in reader.tags(run).items():
            for tag in tags:
                if kind == "scalar":
                    keys.update(("scalar", tag, int(s)) for s in reader.scalars(run, tag).steps)
                elif kind == "hparams":
                    continue
                else:
                    keys.update((kind if kind != "histogram" else "histogram", tag, int(e.step))
                                for e in reader.events(run, kind, tag))
    return keys


_KIND_OF_FIELD = {"text": "text", "image": "image", "histogram": "histogram"}


def _bogus_header(length: int) -> bytes:
    head = struct.pack("<Q", length)
    return head + struct.pack("<I", masked_crc(head))


def mutate(data: bytes, rng: np.random.Generator) -> tuple[bytearray, int, list[str]]:
    """1 to 3 random mutations; returns the bytes, the first damaged offset, their names."""
    buf = bytearray(data)
    first = len(buf)
    names = []
    offsets = [o for o, _ in scan(data).records]
    for _ in range(int(rng.integers(1, 4))):
        kind = str(rng.choice(["flip", "zero", "random", "insert", "delete", "truncate",
                               "bogus_length", "garbage_frame", "zero_tail", "duplicate"]))
        names.append(kind)
        size = len(buf)
        pos = int(rng.integers(0, max(size, 1)))
        span = int(rng.integers(1, 5000))
        if kind == "flip":
            for _ in range(int(rng.integers(1, 9))):
                p = int(rng.integers(0, size))
                buf[p] ^= int(rng.integers(1, 256))
                first = min(first, p)
        elif kind == "zero":
            buf[pos:pos + span] = bytes(len(buf[pos:pos + span]))
        elif kind == "random":
            buf[pos:pos + span] = rng.bytes(len(buf[pos:pos + span]))
        elif kind == "insert":
            buf[pos:pos] = rng.bytes(span)
        elif kind == "delete":
            del buf[pos:pos + span]
        elif kind == "truncate":
            del buf[pos:]
        elif kind == "bogus_length":
            pos = int(rng.choice(offsets)) if offsets and pos < size - 12 else pos
            length = int(rng.choice([1 << 30, (1 << 31) - 1, size + 1, size * 2,
                                     int(rng.integers(0, 5000)), 0]))
            buf[pos:pos + 12] = _bogus_header(length)[: len(buf[pos:pos + 12])]
        elif kind == "garbage_frame":
            buf[pos:pos] = frame(rng.bytes(int(rng.integers(0, 300))))
        elif kind == "zero_tail":
            pos = size
            buf.extend(bytes(span))
        elif kind == "duplicate":
            src = int(rng.integers(0, max(size, 1)))
            buf[pos:pos] = bytes(buf[src:src + span])
        if kind != "flip":
            first = min(first, pos)
    return buf, first, names


@dataclass
class CaseResult:
    seed: int
    mutations: list[str]
    failures: list[str] = field(default_factory=list)
    peak: int = 0
    errors: int = 0


def run_case(seed: int, base: bytes, work_dir: str, chunk: int | None = None) -> CaseResult:
    """Mutate ``base`` with ``seed``, read it (whole and in two steps), resume it."""
    rng = np.random.default_rng(seed)
    data, first, names = mutate(base, rng)
    result = CaseResult(seed, names)
    expected, intact = set(), 0  # intact: the end of the last record before the damage
    records = scan(base).records
    # A file whose header record is damaged is refused as a whole (the reader's policy for
    # files that do not start as record files): whole records after it are not expected.
    header_end = len(records[0][1]) + 16
    header_kept = first >= header_end
    for offset, payload in records:
        end = offset + len(payload) + 16
        if end <= first:
            intact = end
        if end <= first or header_kept and bytes(base[offset:end]) in data:
            expected |= _contents(bytes(payload))
    run = os.path.join(work_dir, f"case{seed}", "run")
    os.makedirs(run)
    path = os.path.join(run, "vdlrecords.fuzz.log")
    saved = sources_base.READ_CHUNK
    sources_base.READ_CHUNK = chunk or int(rng.choice([256, 4096, 2 << 20]))
    try:
        with open(path, "wb") as f:
            f.write(data)
        tracemalloc.start()
        try:
            reader = LogReader(run)
            _, result.peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        result.errors = reader.errors
        missing = expected - _read_keys(reader)
        if missing:
            result.failures.append(f"lost {len(missing)} entries of whole records (damage "
                                    f"from {first}), e.g. {sorted(missing)[:3]}")
        if result.peak > MEMORY_BOUND:
            result.failures.append(f"peak traced memory {result.peak} bytes")
        # The same bytes arriving in two writes, as a live file is read.
        cut = int(rng.integers(0, len(data) + 1))
        with open(path, "wb") as f:
            f.write(data[:cut])
        live = LogReader(run)
        with open(path, "ab") as f:
            f.write(data[cut:])
        live.reload()
        missing = expected - _read_keys(live)
        if missing:
            result.failures.append(f"live read (cut at {cut}) lost {len(missing)} entries")
        # Resuming: never cut a record before the damage (a torn tail may go).
        try:
            record_file.RecordFileWriter(path).close()
        except record_file.NotAppendable:
            pass
        after = open(path, "rb").read()
        if len(after) < intact or after[:intact] != bytes(data[:intact]):
            result.failures.append(f"resuming cut the file to {len(after)} bytes, records "
                                   f"before the damage end at {intact}")
    except Exception as exc:  # noqa: BLE001 - the finding itself
        result.failures.append(f"raised {type(exc).__name__}: {exc}")
    finally:
        sources_base.READ_CHUNK = saved
        shutil.rmtree(os.path.dirname(run), ignore_errors=True)
    return result


@pytest.fixture(scope="module")
def base_file():
    with tempfile.TemporaryDirectory() as tmp:
        path = make_base(os.path.join(tmp, "base"))
        yield open(path, "rb").read()


@pytest.mark.parametrize("block", range(6))
def test_mutations_never_raise_lose_earlier_records_or_grow_memory(base_file, tmp_path, block):
    failures = []
    for seed in range(block * 50, block * 50 + 50):
        result = run_case(seed, base_file, str(tmp_path))
        failures += [f"seed {seed} {result.mutations}: {f}" for f in result.failures]
    assert not failures, "\n".join(failures[:20])


def test_the_base_file_reads_whole(base_file, tmp_path):
    """The fuzzer's oracle itself: without damage every entry is read, with no error."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "vdlrecords.fuzz.log").write_bytes(base_file)
    reader = LogReader(str(run))
    expected = set()
    for _, payload in scan(base_file).records:
        expected |= _contents(bytes(payload))
    assert reader.errors == 0 and _read_keys(reader) == expected
    assert len([k for k in expected if k[0] == "scalar"]) == 2 * 30 * 50
