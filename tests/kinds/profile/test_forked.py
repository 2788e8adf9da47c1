"""The second half of a big trace's events parsed by a forked child (what the runner does:
visualdl.kinds.profile.forked through parse.halves_by) gives the very columns a single
process does, B/E pairs across the halves, metadata and odd events included.

Forking happens in subprocesses of the test (single-threaded, as the runner is), never in
the test process itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kinds.profile import traces
from tests.kinds.profile.test_pieces import _mixed_trace
from visualdl.kinds.profile import forked

ROOT = Path(__file__).resolve().parents[3]


COMPARE = r"""
import json, sys
import numpy as np
from visualdl.kinds.profile import forked, parse
parse.BATCH = int(sys.argv[2])  # many small batches: some of them the careful way
parse.PIECE_BYTES = int(sys.argv[3])  # many pieces (or, 0: the careful split)
if parse.PIECE_BYTES == 0:
    parse.CHUNKED_BYTES = 1 << 62
started = []
def start(fill, size):  # forked.start, counted
    half = forked.start(fill, size)
    started.append(half.pid is not None)
    return half
raw = open(sys.argv[1], "rb").read()
one = parse.parse_trace(raw)
with parse.halves_by(start):
    two = parse.parse_trace(raw)
def events(c):  # every event as what it says (ids differ with the order of arrival)
    return sorted(zip(map(repr, (c.tracks[int(t)] for t in c.track)), c.ts.tolist(),
                      c.dur.tolist(), (c.names[int(i)] for i in c.name),
                      (c.cats[int(i)] for i in c.cat), c.ph.tolist(),
                      (c.args_blob[int(s):int(s) + int(n)] for s, n in zip(c.args_start,
                                                                           c.args_len))))
a, b = events(one), events(two)
same = {"events": a == b, "count": len(a) == len(b) == len(one.ts),
        "names": sorted(one.names) == sorted(two.names), "cats": sorted(one.cats) == sorted(two.cats),
        "tracks": sorted(map(repr, one.tracks)) == sorted(map(repr, two.tracks)),
        "process": one.process_names == two.process_names,
        "threads": one.thread_names == two.thread_names, "warnings": one.warnings == two.warnings}
print(json.dumps({"same": same, "forked": started, "n": len(a), "warnings": one.warnings,
                  "outer": [e[1:3] for e in a if e[3] == "outer"],
                  "threads": {repr(k): v for k, v in one.thread_names.items()}}))
"""


@pytest.mark.skipif(not forked.available(), reason="needs fork and two CPUs")
@pytest.mark.parametrize("batch,piece", [(7, 0), (50_000, 0), (7, 300), (50_000, 5000)])
def test_the_forked_halves_give_the_columns_of_one_process(tmp_path, batch, piece):
    path = tmp_path / "mixed.pt.trace.json"
    path.write_bytes(traces.dump(_mixed_trace()))
    out = subprocess.run([sys.executable, "-c", COMPARE, str(path), str(batch), str(piece)],
                         cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    found = json.loads(out.strip().splitlines()[-1])
    assert found["forked"] == [True]  # the second half really was a child's
    assert all(found["same"].values()), found["same"]
    # what the careful path added is there: the B/E pair across the halves, names
    assert found["threads"] == {"(1, 12)": "loader", "(1, 10)": "main"}
    assert found["outer"] == [[1001.0, 899.0]]  # B in the first half, E in the second
    assert any("malformed" in w for w in found["warnings"])
