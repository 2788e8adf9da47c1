"""The DDP traces made afresh with the installed torch (two gloo processes, as the committed
fixtures were made): the generator still runs, and the distributed view of what it wrote
has both ranks, their all-reduces, and parts equal to the interval sums of the JSON."""

from __future__ import annotations

import json
import os
from decimal import Decimal

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from tests.kinds.profile import make_ddp_traces
from tests.kinds.profile.test_distributed import reference


@pytest.fixture(scope="module")
def fresh(tmp_path_factory, torch):
    root = tmp_path_factory.mktemp("ddp")
    run = root / "fresh"
    try:
        make_ddp_traces.main(str(run))
    except torch.multiprocessing.ProcessExitedException:
        # torch 2.13's gloo now and then aborts a process at its very end ("terminate called
        # without an active exception"), after its trace is written: the traces are what
        # this test reads, so only their absence fails it
        if len(list(run.glob("*.pt.trace.json"))) != 2:
            raise
    for path in run.glob("*.pt.trace.json"):  # settled: the server lists them at once
        os.utime(path, (path.stat().st_atime - 3600, path.stat().st_mtime - 3600))
    with serving(root) as handle:
        client = Client(handle.url)
        yield client, sorted(run.glob("*.pt.trace.json"))
        client.close()


def test_fresh_ddp_traces_in_the_view(fresh):
    api, files = fresh
    assert len(files) == 2
    body = api.json("/api/profile/distributed", run="fresh")
    assert [(r["rank"], r["backend"]) for r in body["ranks"]] == [(0, "gloo"), (1, "gloo")]
    assert body["has_comm"] and body["steps"] == [2, 3, 4, 5, 6]
    for rank, path in zip(body["ranks"], files):
        ref = reference(json.loads(path.read_bytes(), parse_float=Decimal))
        assert [row["op"] for row in rank["collectives"]] == ["all_reduce"]
        assert rank["collectives"][0]["calls"] == ref["calls"] == 5
        for step in rank["steps"]:
            want = ref["steps"][step["step"]]
            for part in body["parts"]:
                assert step["parts"][part] == pytest.approx(want[part], abs=1e-3)
