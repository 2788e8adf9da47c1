"""The distributed view (/api/profile/distributed) on real PyTorch DDP traces (two ranks,
gloo, made by make_ddp_traces.py), checked against interval sums computed here from the
trace JSON alone; our own recorder's single-worker trace; and runs that lack a rank, a
step or distributedInfo, each answered with a message naming the worker, never a 5xx."""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from tests.kinds.profile import hostile, traces
from visualdl import LogWriter

DDP = Path(__file__).parent / "data" / "ddp"
FILES = sorted(DDP.glob("worker*.pt.trace.json.gz"))


def load(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def exact(path: Path) -> dict:
    """The trace with its times as Decimals: sums of times near 5e12 us stay exact."""
    return json.loads(gzip.decompress(path.read_bytes()), parse_float=Decimal)


def write(path: Path, trace: dict) -> None:
    path.write_bytes(gzip.compress(json.dumps(trace).encode()))


# -- the reference: plain interval arithmetic over the JSON -------------------------------
def is_comm(name: str) -> bool:
    return (name == "record_param_comms" or name.startswith(("gloo:", "c10d::"))
            or name.lower().startswith("nccl"))


def merge(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def measure(intervals, lo, hi) -> float:
    return float(sum(max(Decimal(0), min(b, hi) - max(a, lo)) for a, b in merge(intervals)))


def computing(events):
    """Pieces of time whose innermost event on its thread is a CPU op that is not
    communication nor inside communication."""
    threads = {}
    for e in events:
        threads.setdefault((e["pid"], e["tid"]), []).append(e)
    pieces = []
    for evs in threads.values():
        comm = [e for e in evs if is_comm(e["name"])]

        def computes(e):
            return e.get("cat") == "cpu_op" and not is_comm(e["name"]) and not any(
                c["ts"] <= e["ts"] and e["ts"] + e["dur"] <= c["ts"] + c["dur"] for c in comm)
        cuts = sorted({x for e in evs for x in (e["ts"], e["ts"] + e["dur"])})
        for a, b in zip(cuts, cuts[1:]):
            cover = [e for e in evs if e["ts"] <= a and b <= e["ts"] + e["dur"]]
            if cover:
                inner = max(cover, key=lambda e: (e["ts"], -e["dur"]))
                if computes(inner):
                    pieces.append((a, b))
    return pieces


def reference(trace: dict) -> dict:
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    comp = computing(events)
    comm = [(e["ts"], e["ts"] + e["dur"]) for e in events if is_comm(e["name"])]
    steps = {}
    for e in events:
        if e["name"].startswith("ProfilerStep#"):
            lo, hi = e["ts"], e["ts"] + e["dur"]
            a, b, u = measure(comp, lo, hi), measure(comm, lo, hi), measure(comp + comm, lo, hi)
            both = a + b - u
            steps[int(e["name"][13:])] = {"dur": float(e["dur"]), "computation": a - both,
                                          "overlap": both, "communication": b - both,
                                          "other": float(e["dur"]) - u}
    calls = [e for e in events if e["name"].startswith("gloo:")]
    nbytes = sum(math.prod(e["args"]["Input Dims"][0]) * 4 for e in calls)  # float32
    time = float(sum(e["dur"] for e in calls))
    return {"steps": steps, "calls": len(calls), "bytes": nbytes, "time": time}


# -- the server ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    return make_logdir(tmp_path_factory.mktemp("distributed"))


def make_logdir(root: Path, unreadable: bool = True) -> Path:
    """Runs: ddp (the two ranks), onerank, nodist (no distributedInfo), shifted (no step in
    common), partial (one step differs), twins (two rank 0s), hostile (rank 1's trace
    unreadable), alldeep (no readable trace) (these two only when ``unreadable``) and ours (our recorder's trace, one worker)."""
    ranks = [load(f) for f in FILES]
    for run in ("ddp", "onerank", "nodist", "shifted", "partial", "twins", "hostile", "alldeep"):
        if unreadable or run not in ("hostile", "alldeep"):
            (root / run).mkdir()
    for f in FILES:
        shutil.copy(f, root / "ddp" / f.name)
    shutil.copy(FILES[0], root / "onerank" / FILES[0].name)
    if unreadable:
        shutil.copy(FILES[0], root / "hostile" / FILES[0].name)
    for run in ("hostile", "alldeep") if unreadable else ():  # nested past the limit
        deep = root / run / "worker1.1.pt.trace.json"
        deep.write_bytes(hostile.deep_args())
        os.utime(deep, (deep.stat().st_atime - 3600, deep.stat().st_mtime - 3600))
    for name in ("first", "second"):  # two workers that both say rank 0
        shutil.copy(FILES[0], root / "twins" / f"{name}.1.pt.trace.json.gz")
    for f, trace in zip(FILES, ranks):
        bare = {k: v for k, v in trace.items() if k != "distributedInfo"}
        write(root / "nodist" / f.name, bare)
    write(root / "shifted" / FILES[0].name, ranks[0])
    write(root / "shifted" / FILES[1].name, renumber(ranks[1], lambda n: n + 100))
    write(root / "partial" / FILES[0].name, ranks[0])
    write(root / "partial" / FILES[1].name, renumber(ranks[1], lambda n: 60 if n == 6 else n))
    with LogWriter(logdir=str(root / "ours")) as writer:
        writer.add_profile("train", traces.ours(), 5, end_step=7)
    return root


def renumber(trace: dict, new) -> dict:
    out = json.loads(json.dumps(trace))
    for e in out["traceEvents"]:
        if str(e.get("name", "")).startswith("ProfilerStep#"):
            e["name"] = f"ProfilerStep#{new(int(e['name'][13:]))}"
    return out


@pytest.fixture(scope="module")
def server(logdir):
    with serving(logdir) as handle:
        yield handle


@pytest.fixture(scope="module")
def api(server):
    client = Client(server.url)
    yield client
    client.close()


def test_fixtures_are_real_ddp_traces():
    for rank, path in enumerate(FILES):
        trace = load(path)
        info = trace["distributedInfo"]
        assert (info["backend"], info["rank"], info["world_size"]) == ("gloo", rank, 2)
        names = [e.get("name", "") for e in trace["traceEvents"]]
        assert names.count("gloo:all_reduce") == 5
        assert sorted(n for n in names if n.startswith("ProfilerStep#")) == \
            [f"ProfilerStep#{k}" for k in range(2, 7)]


def test_parts_match_interval_sums_of_the_trace_json(api):
    body = api.json("/api/profile/distributed", run="ddp")
    assert body["world_size"] == 2 and body["has_comm"] and body["warnings"] == []
    assert body["steps"] == [2, 3, 4, 5, 6]
    assert [(r["rank"], r["worker"], r["backend"]) for r in body["ranks"]] == \
        [(0, "worker0", "gloo"), (1, "worker1", "gloo")]
    for rank, path in zip(body["ranks"], FILES):
        ref = reference(exact(path))
        for step in rank["steps"]:
            want = ref["steps"][step["step"]]
            assert step["dur"] == pytest.approx(want["dur"], abs=1e-6)
            for part in ("computation", "overlap", "communication", "other"):
                assert step["parts"][part] == pytest.approx(want[part], abs=1e-3), part
            assert sum(step["parts"].values()) == pytest.approx(step["dur"], abs=1e-6)
        assert rank["steps"][0]["parts"]["communication"] > 0
        [row] = rank["collectives"]
        assert (row["op"], row["calls"]) == ("all_reduce", ref["calls"])
        assert row["bytes"] == ref["bytes"] == 5 * 9610 * 4
        assert row["time"] == pytest.approx(ref["time"], abs=1e-6)
        assert row["bandwidth"] == pytest.approx(ref["bytes"] / (ref["time"] * 1e-6))


def test_slowest_rank_and_waits(api):
    body = api.json("/api/profile/distributed", run="ddp")
    refs = [reference(exact(f)) for f in FILES]
    compute = [{n: s["computation"] + s["overlap"] for n, s in r["steps"].items()} for r in refs]
    totals = [sum(c.values()) for c in compute]
    assert body["slowest"] == totals.index(max(totals))
    for rank, mine in zip(body["ranks"], compute):
        waits = [max(c[n] for c in compute) - mine[n] for n in body["steps"]]
        assert [s["wait"] for s in rank["steps"]] == pytest.approx(waits, abs=1e-3)
        assert rank["totals"]["wait"] == pytest.approx(sum(waits), abs=1e-3)
    waits = [r["totals"]["wait"] for r in body["ranks"]]
    assert waits[body["slowest"]] == min(waits) and max(waits) > 0


def test_our_single_worker_trace_has_no_communication(api):
    body = api.json("/api/profile/distributed", run="ours")
    assert body["has_comm"] is False and body["world_size"] == 1
    [rank] = body["ranks"]
    assert rank["collectives"] == [] and rank["worker"] == "train"
    assert any("no distributedInfo" in w for w in body["warnings"])
    for step in rank["steps"]:
        assert step["parts"]["communication"] == step["parts"]["overlap"] == 0
        assert step["parts"]["computation"] > 0
        assert sum(step["parts"].values()) == pytest.approx(step["dur"])


def test_a_missing_rank_is_named(api):
    body = api.json("/api/profile/distributed", run="onerank")
    assert [r["rank"] for r in body["ranks"]] == [0]
    assert any("world size 2" in w and "rank(s) 1" in w for w in body["warnings"])


def test_two_workers_claiming_one_rank_are_named(api):
    body = api.json("/api/profile/distributed", run="twins")
    assert [(r["rank"], r["worker"]) for r in body["ranks"]] == [(0, "first"), (0, "second")]
    assert "workers first, second all say they are rank 0" in body["warnings"]
    assert any("rank(s) 1 is not in this run" in w for w in body["warnings"])


def test_an_unreadable_worker_is_named_and_the_others_served(api):
    body = api.json("/api/profile/distributed", run="hostile")
    assert [r["worker"] for r in body["ranks"]] == ["worker0"]
    [why] = [w for w in body["warnings"] if w.startswith("worker worker1:")]
    assert "this trace cannot be read" in why and hostile.TOO_DEEP in why
    r = api.get("/api/profile/distributed", {"run": "alldeep"})
    assert r.status_code == 422
    assert r.json()["error"].startswith("no worker's trace can be read: worker1: this trace")


def test_traces_without_distributed_info_take_ranks_from_the_order(api):
    body = api.json("/api/profile/distributed", run="nodist")
    assert [(r["rank"], r["worker"], r["backend"]) for r in body["ranks"]] == \
        [(0, "worker0", None), (1, "worker1", None)]
    assert sum("no distributedInfo" in w for w in body["warnings"]) == 2


def test_steps_not_in_every_rank_are_left_out_and_named(api):
    body = api.json("/api/profile/distributed", run="partial")
    assert body["steps"] == [2, 3, 4, 5]
    assert any("worker0" in w and "steps 6" in w for w in body["warnings"])
    assert any("worker1" in w and "steps 60" in w for w in body["warnings"])


def test_ranks_sharing_no_step_are_a_422_naming_them(api):
    r = api.get("/api/profile/distributed", {"run": "shifted"})
    assert r.status_code == 422
    message = r.json()["error"]
    assert "share no step" in message and "worker0 has steps 2-6" in message
    assert "worker1 has steps 102-106" in message


@pytest.mark.parametrize("params, status", [({}, 400), ({"run": "nope"}, 404),
                                            ({"run": "ddp", "step": "x"}, 400)])
def test_bad_arguments(api, params, status):
    r = api.get("/api/profile/distributed", params)
    assert r.status_code == status
    assert r.json()["error"]


def test_a_step_with_no_profile_names_the_workers(api):
    r = api.get("/api/profile/distributed", {"run": "ddp", "step": "99"})
    assert r.status_code == 422
    assert "worker0: no profile at step 99" in r.json()["error"]
