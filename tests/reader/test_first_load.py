"""The first load of many runs in two passes (visualdl.reader.first_load): the first chart's
tag of every run first, then the rest; the same data in the end as a one-pass load, and
answers flagged ``"loading"`` while a tag still has points to come."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from visualdl import LogWriter
from visualdl.format.framing import frame
from visualdl.format.scalar_codec import varint
from visualdl.reader import first_load
from visualdl.reader.log_reader import LogReader
from visualdl.server.app import create_app
from visualdl.server.reader_provider import LogReaderProvider

RUNS = 80  # above first_load.MIN_FILES
TAGS = ("a/loss", "b/acc", "lr", "z")
FLUSHES = 3
STEPS = 40  # per flush


def value(i: int, k: int, step: int) -> float:
    return float(np.float32(1.0 / (1 + step) + 0.001 * i + k))  # a float32: kept compact


def write_sweep(root: Path) -> Path:
    """RUNS runs, each: hparams, a text, and the scalar tags in several records (one per
    flush); run 7 also has a second record file, run 9 a damaged record, run 11 a record
    that only protobuf reads."""
    for i in range(RUNS):
        with LogWriter(logdir=str(root / f"run{i:03d}")) as w:
            w.add_hparams({"lr": 0.1 / (1 + i % 4), "seed": i}, ["a/loss"], walltime=1e9)
            w.add_text("notes", f"run {i}", step=0, walltime=1e9)
            w.flush()  # a record of its own: the scalar records hold scalars only
            for f in range(FLUSHES):
                for step in range(f * STEPS, (f + 1) * STEPS):
                    for k, tag in enumerate(TAGS):
                        w.add_scalar(tag, value(i, k, step), step=step, walltime=1e9 + step)
                w.flush()
    second = root / "run007" / "vdlrecords.9999999999.other.1.log"
    with LogWriter(logdir=str(root / "tmp")) as w:
        for step in range(1000, 1010):
            w.add_scalar("b/acc", 0.5, step=step, walltime=2e9 + step)
    (next((root / "tmp").iterdir())).rename(second)
    (root / "tmp").rmdir()
    with open(next((root / "run011").iterdir()), "ab") as f:
        f.write(frame(unpacked_record({"a/loss": [500, 501], "lr": [500, 502, 503]})))
    damaged = next((root / "run009").iterdir())
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF  # inside a scalar record: its CRC fails
    damaged.write_bytes(bytes(data))
    return root


def unpacked_record(series: dict[str, list[int]]) -> bytes:
    """A record whose series have their steps unpacked (one varint field each): valid
    protobuf that the scalar codec leaves to protobuf."""
    def field(key: bytes, data: bytes) -> bytes:
        return key + varint(len(data)) + data

    entries = b""
    for tag, steps in series.items():
        doubles = np.arange(len(steps), dtype="<f8").tobytes()
        steps_unpacked = b"".join(b"\x10" + varint(s) for s in steps)
        body = field(b"\x0a", tag.encode()) + steps_unpacked + field(b"\x1a", doubles) \
            + field(b"\x22", doubles)
        entries += field(b"\x12", field(b"\x0a", body))
    return entries


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> Path:
    return write_sweep(tmp_path_factory.mktemp("first-load"))


def one_pass(logdir: Path, monkeypatch) -> LogReader:
    with monkeypatch.context() as m:
        m.setattr(first_load, "MIN_FILES", 10**9)
        return LogReader(str(logdir))


def assert_same(a: LogReader, b: LogReader) -> None:
    assert a.runs() == b.runs()
    for run in a.runs():
        assert a.tags(run) == b.tags(run), run
        for tag in a.tags(run).get("scalar", []):
            for x, y in zip(a.scalars(run, tag), b.scalars(run, tag)):
                assert x.dtype == y.dtype and np.array_equal(x, y), (run, tag)
        assert a.hparams(run).hparams == b.hparams(run).hparams
        assert [t.text for t in a.texts(run, "notes")] == [t.text for t in b.texts(run, "notes")]
    assert (a.errors, a.error_messages) == (b.errors, b.error_messages)


class Watch:
    """Looks at the reader when its second pass starts (the real pass then runs on)."""

    def __init__(self, reader: LogReader, look) -> None:
        self.seen: list = []
        real = reader._second_pass

        def second_pass(*args):
            if not self.seen:
                self.seen.append(look())
            return real(*args)

        reader._second_pass = second_pass


def test_two_passes_give_the_data_of_one(sweep: Path, monkeypatch) -> None:
    reader = LogReader(str(sweep), load=False)
    watch = Watch(reader, lambda: reader._phase)
    assert reader.reload() > 0
    assert watch.seen == ["second"]  # it did take two passes
    assert reader.errors == 1 and "run009" in reader.error_messages[0]
    assert_same(reader, one_pass(sweep, monkeypatch))
    # the record only protobuf reads, in both passes: its points last, as written
    assert list(reader.scalars("run011", "a/loss").steps[-2:]) == [500, 501]
    assert list(reader.scalars("run011", "lr").steps[-3:]) == [500, 502, 503]
    # the second run file of run007 added its points after the first file's
    steps = reader.scalars("run007", "b/acc").steps
    assert steps[-1] == 1009 and len(steps) == FLUSHES * STEPS + 10


def test_first_tag_of_every_run_is_complete_after_the_first_pass(sweep: Path,
                                                                  monkeypatch) -> None:
    full = one_pass(sweep, monkeypatch)
    reader = LogReader(str(sweep), load=False)

    def look():
        first = min(TAGS)  # "a/loss": the first chart of the scalars page
        runs = reader.runs()
        return {
            "runs": runs,
            "pending": {tag: reader.scalar_pending(tag) for tag in TAGS},
            "first complete": all(
                np.array_equal(reader.scalars(r, first).values, full.scalars(r, first).values)
                for r in runs),
            "hparams": all(reader.hparams(r) is not None for r in runs),
            # the other tags: known for every run, their points mostly still to come
            "tags known": all(reader.tags(r)["scalar"] == sorted(TAGS) for r in runs),
            "lr points": sum(len(reader.scalars(r, "lr").steps) for r in runs),
            "lr empty": sum(not len(reader.scalars(r, "lr").steps) for r in runs),
        }

    watch = Watch(reader, look)
    assert reader.loading and reader.scalar_pending("a/loss")
    reader.reload()
    seen = watch.seen[0]
    assert seen["runs"] == full.runs()
    assert seen["pending"] == {"a/loss": False, "b/acc": True, "lr": True, "z": True}
    assert seen["first complete"] and seen["hparams"] and seen["tags known"]
    # only the first run (read whole, to find the first tag) has its "lr" points yet
    assert seen["lr points"] == FLUSHES * STEPS and seen["lr empty"] == RUNS - 1
    assert not reader.loading and not reader.scalar_pending("z")


def test_a_tag_asked_for_while_loading_is_read_first(sweep: Path, monkeypatch) -> None:
    full = one_pass(sweep, monkeypatch)
    reader = LogReader(str(sweep), load=False)
    reader.prioritize(["z"])  # a browser asked for "z" before the first pass
    real = reader._read_file
    calls = []

    def read_file(state, keep=None):
        calls.append(keep)
        if len(calls) == RUNS // 2:  # half way: a chart of "lr" comes on screen
            reader.prioritize(["lr"])
        return real(state, keep)

    reader._read_file = read_file
    watch = Watch(reader, lambda: {tag: reader.scalar_pending(tag) for tag in TAGS})
    reader.reload()
    assert watch.seen[0] == {"a/loss": True, "b/acc": True, "lr": True, "z": False}
    assert calls[0] == frozenset({"z"})
    assert frozenset({"z", "lr"}) in calls  # files after the request read "lr" too
    assert_same(reader, full)  # and every series still in order


def test_few_files_load_in_one_pass(tmp_path: Path) -> None:
    for i in range(3):
        with LogWriter(logdir=str(tmp_path / f"r{i}")) as w:
            w.add_scalar("loss", 1.0, step=0)
    reader = LogReader(str(tmp_path), load=False)
    watch = Watch(reader, lambda: "second pass")
    reader.reload()
    assert watch.seen == [] and reader.runs() == ["r0", "r1", "r2"]
    assert not reader.scalar_pending("loss")


def test_server_flags_partial_answers_while_loading(sweep: Path) -> None:
    """While the second pass runs, the first chart's tag is answered complete and the
    others with ``"loading": true``; after the load, no answer is flagged."""
    provider = LogReaderProvider([str(sweep)], reload_interval=3600)
    client = create_app(data=provider, start_reload=False).test_client()
    reader = provider._reader = LogReader([str(sweep)], load=False)
    answers = {}

    def look():
        for tag in ("a/loss", "lr"):
            answers[tag] = client.post("/api/scalars/batch", json={
                "series": [{"run": "run050", "tag": tag}], "points": 1000}).get_json()
        answers["groups"] = client.post("/api/scalars/groups", json={
            "tag": "lr", "hparams": ["lr"]}).get_json()
        answers["single"] = client.get("/api/scalars?run=run050&tag=a/loss").get_json()
        answers["info"] = client.get("/api/info").get_json()

    Watch(reader, look)
    provider.reload_once()
    assert answers["info"]["loaded"] is False
    first, other = answers["a/loss"], answers["lr"]
    assert first["loading"] is False and "loading" not in first["series"][0]
    assert first["series"][0]["total"] == FLUSHES * STEPS
    assert other["loading"] is True and other["series"][0]["loading"] is True
    assert answers["groups"]["loading"] is True
    assert "loading" not in answers["single"]
    after = client.post("/api/scalars/groups", json={"tag": "lr", "hparams": ["lr"]}).get_json()
    assert after["loading"] is False
    assert sum(len(g["members"]) for g in after["groups"]) == RUNS
    batch = client.post("/api/scalars/batch", json={
        "series": [{"run": "run050", "tag": "lr"}], "points": 1000}).get_json()
    assert batch["loading"] is False and batch["series"][0]["total"] == FLUSHES * STEPS


def test_a_held_batch_answers_complete_once_the_tag_is_loaded(sweep: Path) -> None:
    """``"wait"``: asked while the first load runs, the batch is held until the tag's
    points are all in, then answered complete (the app asks this way while loading)."""
    import threading

    provider = LogReaderProvider([str(sweep)], reload_interval=3600)
    client = create_app(data=provider, start_reload=False).test_client()
    reader = provider._reader = LogReader([str(sweep)], load=False)
    reader.pause_hook = provider._yield_to_requests
    held = {}
    gate = threading.Event()

    def look():  # the second pass is starting: ask for "lr" (still pending) and hold
        def ask():
            held["answer"] = client.post("/api/scalars/batch", json={
                "series": [{"run": f"run{i:03d}", "tag": "lr"} for i in range(RUNS)],
                "points": 1000, "wait": 10}).get_json()
        held["thread"] = threading.Thread(target=ask)
        held["thread"].start()
        gate.set()

    Watch(reader, look)
    loader = threading.Thread(target=provider.reload_once)
    loader.start()
    assert gate.wait(30)
    held["thread"].join(30)
    loader.join(30)
    answer = held["answer"]
    assert answer["loading"] is False
    reference = LogReader([str(sweep)])
    assert [item["total"] for item in answer["series"]] == \
        [len(reference.scalars(f"run{i:03d}", "lr").steps) for i in range(RUNS)]
    assert all("loading" not in item for item in answer["series"])
    assert answer["series"][50]["values"][:2] == [value(50, 2, 0), value(50, 2, 1)]


def test_the_second_pass_lets_a_request_go_first(sweep: Path, monkeypatch) -> None:
    """Between files of the second pass the reader waits while a request is being
    answered (``provider.serving()``), so the two do not share the interpreter; with no
    request in flight it goes straight on. Told by what the wait does (its sleeps, and
    whether the request had left when it returned), not by a clock."""
    import threading
    import time

    from visualdl.server import reader_provider

    provider = LogReaderProvider([str(sweep)], reload_interval=3600)
    reader = provider._reader = LogReader([str(sweep)], load=False)
    real = provider._yield_to_requests
    calls, sleeps = [], []
    release, holding, left = threading.Event(), threading.Event(), threading.Event()

    class Clock:  # the provider's ``time``, its sleeps counted: the third one lasts until
        def __getattr__(self, name):  # the request has finished
            return getattr(time, name)

        @staticmethod
        def sleep(seconds: float) -> None:
            sleeps.append(seconds)
            if len(sleeps) == 3:
                release.set()
                assert left.wait(30)
            time.sleep(seconds)

    monkeypatch.setattr(reader_provider, "time", Clock())

    def request() -> None:
        with provider.serving():
            holding.set()
            release.wait(30)
            holding.clear()
        left.set()

    seen = {}

    def hook():
        calls.append(1)
        if len(calls) == 3:  # a request is being answered: wait until it is done
            thread = threading.Thread(target=request)
            thread.start()
            assert holding.wait(30)
            real()
            seen["busy"] = (len(sleeps), holding.is_set())
            thread.join(30)
        elif len(calls) == 4:  # none: no wait at all
            before = len(sleeps)
            real()
            seen["idle"] = len(sleeps) - before
        else:
            real()

    reader.pause_hook = hook
    provider.reload_once()
    assert len(calls) == RUNS  # once before each file of the second pass
    # it slept until the request left (not for its 0.25 s cap: the request was still in)
    assert seen["busy"] == (3, False)
    assert seen["idle"] == 0
    assert not reader.scalar_pending("lr")


def test_wait_must_be_a_number_of_seconds(sweep: Path) -> None:
    provider = LogReaderProvider([str(sweep)], reload_interval=3600)
    client = create_app(data=provider, start_reload=False).test_client()
    for bad in ("5", -1, 11, True):
        response = client.post("/api/scalars/batch", json={
            "series": [{"run": "run000", "tag": "lr"}], "wait": bad})
        assert response.status_code == 400
        assert "wait" in response.get_json()["error"]
