"""Hostile traces (issue 29): what a gzip bomb costs the first load and the profile routes,
and what the bounds cost valid input. Prints tables; run it against any checkout (``PYTHONPATH``
decides which), e.g. before and after a change.

Cases, each in a fresh interpreter (its peak RSS its own):

* first load: ``LogReader.reload()`` of a logdir of ``--traces`` valid gzip'd traces, with
  and without one bomb (``--bomb-mib`` MiB of JSON blanks in about a thousandth of that);
* bomb overview: a server on that logdir, the time to the bomb's ``/api/profile/overview``
  answer (a 422 with the bounds) and the server's peak RSS after it;
* gunzip: a valid gzip'd trace of about ``--trace-mb`` MB of JSON inflated by
  ``torchtrace.load(...).json`` (bounded, chunked) and by ``gzip.decompress``;
* discovery: ``Location.find`` over ``--runs`` run folders (one lstat more per listed file).

    python bench/hostile_traces.py [--bomb-mib 1024] [--traces 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def _trace(events: int, seed: int = 0) -> bytes:
    rng = random.Random(seed)
    out, t = [], 0.0
    for i in range(events):
        t += rng.random() * 10
        out.append({"ph": "X", "cat": "cpu_op", "name": rng.choice(("aten::mm", "aten::add")),
                    "pid": 1, "tid": 2, "ts": 1.7e12 + t, "dur": round(rng.random() * 5, 3),
                    "args": {"External id": i}})
        if i % 1000 == 0:
            out.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}",
                        "pid": 1, "tid": 2, "ts": 1.7e12 + t, "dur": 1.0})
    return json.dumps({"traceEvents": out}).encode()


def _bomb(path: str, mib: int) -> None:
    """Valid JSON of ``mib`` MiB, mostly blanks, gzip'd a block at a time."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * (1 << 20)
    with open(path, "wb") as f:
        f.write(comp.compress(b'{"traceEvents": ['))
        for _ in range(mib):
            f.write(comp.compress(block))
        f.write(comp.compress(b"]}") + comp.flush())


def make_logdir(root: str, traces: int, bomb_mib: int) -> None:
    for k in range(traces):
        run = os.path.join(root, "good")
        os.makedirs(run, exist_ok=True)
        with open(os.path.join(run, f"w{k}.1.pt.trace.json.gz"), "wb") as f:
            f.write(gzip.compress(_trace(5000, k), 6))
    if bomb_mib:
        os.makedirs(os.path.join(root, "bad"))
        _bomb(os.path.join(root, "bad", "bomb.1.pt.trace.json.gz"), bomb_mib)


def _child(code: str, *args: str) -> dict:
    """Run ``code`` (defines ``result``) in a fresh interpreter; its result and peak RSS."""
    wrapper = (f"import json, resource, sys, time\nargs = {list(args)!r}\n{code}\n"
               "result['peak_rss_mb'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss "
               "/ 1024\nprint(json.dumps(result))")
    done = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True,
                          timeout=900)
    if done.returncode:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


FIRST_LOAD = """
from visualdl.reader import LogReader
t = time.perf_counter()
reader = LogReader(args[0]); reader.reload()
result = {"seconds": time.perf_counter() - t, "runs": len(reader.runs())}
"""
OVERVIEW = """
from visualdl.server.background import start_server
import urllib.request, urllib.error
handle = start_server(args[0], reload_interval=60)
assert handle.wait_loaded(600)
t = time.perf_counter()
try:
    status = urllib.request.urlopen(handle.url + "/api/profile/overview?run=bad&tag=bomb",
                                    timeout=600).status
except urllib.error.HTTPError as err:
    status = err.code
result = {"seconds": time.perf_counter() - t, "status": status}
handle.stop()
"""
GUNZIP = """
import gzip
from visualdl.sources import torchtrace
data = open(args[0], "rb").read()
t = time.perf_counter(); a = torchtrace.load(args[0], data).json; mid = time.perf_counter()
b = gzip.decompress(data); end = time.perf_counter()
assert a == b
result = {"bounded": mid - t, "gzip": end - mid, "mb": len(a) / 1e6}
"""
FIND = """
from visualdl.reader.discovery import find_files, make_roots
root = make_roots([args[0]])[0]
find_files(root)  # (the sources' registry loaded, the folders in the page cache)
t = time.perf_counter(); found = find_files(root)
result = {"seconds": time.perf_counter() - t, "folders": len(found)}
"""


def _median(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bomb-mib", type=int, default=1024)
    parser.add_argument("--traces", type=int, default=20)
    parser.add_argument("--trace-mb", type=float, default=40.0)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clean, bombed = os.path.join(tmp, "clean"), os.path.join(tmp, "bombed")
        make_logdir(clean, opts.traces, 0)
        make_logdir(bombed, opts.traces, opts.bomb_mib)
        size = os.path.getsize(os.path.join(bombed, "bad", "bomb.1.pt.trace.json.gz"))
        print(f"bomb: {size / 1e6:.2f} MB gzip'd, {opts.bomb_mib} MiB inflated; "
              f"{opts.traces} valid traces beside it\n")
        print("| case | seconds (median) | peak RSS MB |\n| --- | --- | --- |")
        for label, folder in (("first load, valid traces only", clean),
                              ("first load, with the bomb", bombed)):
            got = [_child(FIRST_LOAD, folder) for _ in range(opts.repeat)]
            print(f"| {label} | {_median([g['seconds'] for g in got]):.2f} | "
                  f"{max(g['peak_rss_mb'] for g in got):.0f} |")
        got = [_child(OVERVIEW, bombed) for _ in range(opts.repeat)]
        print(f"| the bomb's overview (HTTP {got[0]['status']}) | "
              f"{_median([g['seconds'] for g in got]):.2f} | "
              f"{max(g['peak_rss_mb'] for g in got):.0f} |")
        big = os.path.join(tmp, "big.pt.trace.json.gz")
        with open(big, "wb") as f:
            f.write(gzip.compress(_trace(int(opts.trace_mb * 1e6 / 190)), 6))
        got = [_child(GUNZIP, big) for _ in range(opts.repeat)]
        print(f"| inflate a valid {got[0]['mb']:.0f} MB trace: torchtrace.load().json | "
              f"{_median([g['bounded'] for g in got]):.2f} | |")
        print(f"| inflate a valid {got[0]['mb']:.0f} MB trace: gzip.decompress | "
              f"{_median([g['gzip'] for g in got]):.2f} | |")
        runs = os.path.join(tmp, "runs")
        for k in range(opts.runs):
            os.makedirs(os.path.join(runs, f"r{k}"))
            open(os.path.join(runs, f"r{k}", "vdlrecords.1.log"), "wb").close()
        got = [_child(FIND, runs) for _ in range(opts.repeat)]
        print(f"| discovery of {got[0]['folders']} run folders | "
              f"{_median([g['seconds'] for g in got]):.3f} | |")


if __name__ == "__main__":
    main()
