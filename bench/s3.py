"""Object-storage benchmark on a real S3 API (moto's server on 127.0.0.1): what writing a
run and watching idle runs cost in requests and bytes.

    python bench/s3.py                   # 10,000 flushes; 100 idle runs
    python bench/s3.py --flushes 2000    # shorter
    python bench/s3.py --peer-flushes 2000   # the peers' quadratic uploads take long:
                                             # measure them on fewer flushes

Every number comes from the S3 server's request log (``visualdl.storage.testing.LocalS3``
wraps moto's WSGI app and logs method, path and bytes of every request), not from the
clients' own accounting.

Part 1, writing: one training run of ``--flushes`` flushes, each after one ``add_scalar``
of ``train/loss`` (the worst case for an object store: many small flushes), by
  ours           LogWriter(logdir="s3://...") : one new segment object per flush
  tensorboardX   SummaryWriter("s3://...") (its own S3 path, boto3): ``flush()`` uploads
                 the whole event file again
  tb EventFileWriter  TensorBoard 2.21's writer (what torch.utils.tensorboard uses), with
                 its TF-free gfile S3 path, in the TensorBoard venv of bench/write_read.py
                 (boto3 installed there); S3 cannot append, so each flush rewrites the file
Measured, not assumed: PUTs, all requests, bytes uploaded, and the size of what is stored.

Part 2, idle: 100 runs on S3 (ours: segments; TensorBoard: the same points as event
files), nothing changing. Ours: the server's provider reloads with back-off (5 s doubling
to 80 s); measured over a shortened window with the schedule scaled down (0.05 s -> 0.8 s)
for the requests per idle reload and the reloads made, then extrapolated to one hour with
the real schedule (5, 10, 20, 40, then 80 s). TensorBoard 2.21 (``--load_fast=false``: its
Rust data server cannot read s3://) is run for ``--tb-window`` seconds at its default
``--reload_interval 5`` and its requests are scaled to an hour.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from visualdl.storage.testing import LocalS3  # noqa: E402

TB_VENV = Path("/work/main/.bench/venvs/tensorboard-2.21.0")
BUCKET = "bench"

TB_WRITER = """
import sys, time
from tensorboard.summary.writer.event_file_writer import EventFileWriter
from tensorboard.compat.proto import event_pb2, summary_pb2
w = EventFileWriter(sys.argv[1], max_queue_size=10**9, flush_secs=10**6)
for step in range(int(sys.argv[2])):
    v = summary_pb2.Summary.Value(tag="train/loss", simple_value=1.0 / (step + 1))
    w.add_event(event_pb2.Event(wall_time=time.time(), step=step,
                                summary=summary_pb2.Summary(value=[v])))
    w.flush()
w.close()
"""


def summarize(requests: list, stored: int) -> dict:
    puts = [r for r in requests if r.is_put]
    return {"puts": len(puts), "requests": len(requests),
            "uploaded": sum(r.bytes_in for r in puts), "stored": stored}


def stored_bytes(s3: LocalS3, prefix: str) -> int:
    import boto3

    client = boto3.client("s3", endpoint_url=s3.endpoint, region_name="us-east-1")
    total = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        total += sum(item["Size"] for item in page.get("Contents", []))
    return total


def write_ours(s3: LocalS3, flushes: int) -> dict:
    from visualdl import LogWriter

    prefix = f"ours-{uuid.uuid4().hex[:6]}"
    mark = s3.mark()
    t = time.perf_counter()
    with LogWriter(logdir=f"s3://{BUCKET}/{prefix}/run", flush_secs=10**6) as w:
        for step in range(flushes):
            w.add_scalar("train/loss", 1.0 / (step + 1), step)
            w.flush()
    seconds = time.perf_counter() - t
    return dict(summarize(s3.since(mark), stored_bytes(s3, prefix)), seconds=seconds)


def write_tensorboardx(s3: LocalS3, flushes: int) -> dict:
    try:
        from tensorboardX import SummaryWriter
    except ImportError as exc:
        return {"error": f"tensorboardX not installed ({exc})"}
    prefix = f"tbx-{uuid.uuid4().hex[:6]}"
    os.environ["S3_ENDPOINT"] = s3.endpoint
    mark = s3.mark()
    t = time.perf_counter()
    w = SummaryWriter(f"s3://{BUCKET}/{prefix}/run", flush_secs=10**6, max_queue=10**9)
    for step in range(flushes):
        w.add_scalar("train/loss", 1.0 / (step + 1), step)
        w.flush()
    w.close()
    seconds = time.perf_counter() - t
    return dict(summarize(s3.since(mark), stored_bytes(s3, prefix)), seconds=seconds)


def write_tb_event_file_writer(s3: LocalS3, flushes: int) -> dict:
    python = TB_VENV / "bin" / "python"
    if not python.exists():
        return {"error": f"no TensorBoard venv at {TB_VENV} (run bench/write_read.py)"}
    prefix = f"tb-{uuid.uuid4().hex[:6]}"
    env = dict(os.environ, S3_ENDPOINT=s3.endpoint, **s3.env())
    mark = s3.mark()
    t = time.perf_counter()
    proc = subprocess.run([str(python), "-I", "-c", TB_WRITER, f"s3://{BUCKET}/{prefix}/run",
                           str(flushes)], env=env, capture_output=True, text=True,
                          timeout=3600, cwd=tempfile.gettempdir())
    seconds = time.perf_counter() - t
    if proc.returncode:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return dict(summarize(s3.since(mark), stored_bytes(s3, prefix)), seconds=seconds)


def hourly_reloads(base: float = 5.0, limit: float = 80.0, hour: float = 3600.0) -> int:
    """Idle reloads in the first hour with the back-off schedule (first reload loads)."""
    t, wait, n = 0.0, base, 1
    while True:
        wait = min(wait * 2, limit)  # after each idle reload
        t += wait
        if t > hour:
            return n
        n += 1


def idle_ours(s3: LocalS3, runs: int, window: float) -> dict:
    from visualdl import LogWriter
    from visualdl.server.reader_provider import LogReaderProvider

    prefix = f"idle-ours-{uuid.uuid4().hex[:6]}"
    for r in range(runs):
        with LogWriter(logdir=f"s3://{BUCKET}/{prefix}/run{r:03d}", flush_secs=10**6) as w:
            for step in range(100):
                w.add_scalar("loss", r + step / 100, step)
                if step % 50 == 49:
                    w.flush()
    provider = LogReaderProvider([f"s3://{BUCKET}/{prefix}"], reload_interval=0.05)
    provider.start()
    provider.wait_loaded(120)
    assert len(provider.runs()) == runs
    reloads0, mark = provider.reloads, s3.mark()
    time.sleep(window)
    requests, reloads = s3.since(mark), provider.reloads - reloads0
    provider.stop()
    gets = sum(1 for r in requests if r.is_get)
    per_reload = len(requests) / max(1, reloads)
    return {"reloads": reloads, "requests": len(requests), "gets": gets,
            "per_reload": per_reload, "hourly": per_reload * hourly_reloads(),
            "hourly_reloads": hourly_reloads()}


def idle_tensorboard(s3: LocalS3, runs: int, window: float) -> dict:
    python = TB_VENV / "bin" / "python"
    if not python.exists():
        return {"error": f"no TensorBoard venv at {TB_VENV}"}
    import boto3

    from visualdl.format.framing import frame
    from visualdl.sources.tfevents import event_pb2 as pb

    prefix = f"idle-tb-{uuid.uuid4().hex[:6]}"
    client = boto3.client("s3", endpoint_url=s3.endpoint, region_name="us-east-1")
    for r in range(runs):
        data = [frame(pb.Event(wall_time=time.time(), file_version="brain.Event:2")
                      .SerializeToString())]
        for step in range(100):
            data.append(frame(pb.Event(wall_time=time.time(), step=step, summary=pb.Summary(
                value=[pb.Summary.Value(tag="loss", simple_value=r + step / 100)]))
                .SerializeToString()))
        client.put_object(Bucket=BUCKET, Key=f"{prefix}/run{r:03d}/events.out.tfevents.1.h",
                          Body=b"".join(data))
    env = dict(os.environ, S3_ENDPOINT=s3.endpoint, **s3.env())
    port = _free_port()
    proc = subprocess.Popen(
        [str(python), "-I", "-m", "tensorboard.main", "--logdir", f"s3://{BUCKET}/{prefix}",
         "--load_fast=false", "--reload_interval", "5", "--port", str(port),
         "--host", "127.0.0.1"], env=env, cwd=tempfile.gettempdir(),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        import requests as http

        deadline = time.time() + 120
        while time.time() < deadline:  # wait for the first load: every run listed
            try:
                runs_seen = http.get(f"http://127.0.0.1:{port}/data/runs", timeout=5).json()
                if len(runs_seen) >= runs:
                    break
            except Exception:  # noqa: BLE001 - not up yet
                pass
            if proc.poll() is not None:
                return {"error": (proc.stderr.read().strip().splitlines() or ["?"])[-1]}
            time.sleep(1)
        else:
            return {"error": "TensorBoard did not load the runs within 120 s"}
        mark = s3.mark()
        time.sleep(window)
        requests = s3.since(mark)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    gets = sum(1 for r in requests if r.is_get)
    return {"requests": len(requests), "gets": gets, "window": window,
            "hourly": len(requests) * 3600 / window}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mb(n: float) -> str:
    return f"{n / 1e6:,.2f} MB"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flushes", type=int, default=10_000)
    parser.add_argument("--peer-flushes", type=int, nargs="*", default=None,
                        help="flush counts for the peers (default: --flushes)")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--window", type=float, default=8.0,
                        help="seconds of the shortened idle window for ours")
    parser.add_argument("--tb-window", type=float, default=60.0,
                        help="seconds TensorBoard is watched while idle")
    parser.add_argument("--skip", nargs="*", default=[],
                        help="parts to skip: ours tbx tb idle-ours idle-tb")
    args = parser.parse_args(argv)
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with LocalS3() as s3:
        s3.make_bucket(BUCKET)
        writers = [("ours", write_ours), ("tensorboardX", write_tensorboardx),
                   ("tb EventFileWriter", write_tb_event_file_writer)]
        keys = {"ours": "ours", "tensorboardX": "tbx", "tb EventFileWriter": "tb"}
        print(f"\nWriting one run, N flushes of one add_scalar each, to s3:// "
              f"(moto at {s3.endpoint})\n", flush=True)
        print(f"{'writer':<20} {'N':>7} {'PUTs':>8} {'requests':>9} {'uploaded':>14} "
              f"{'stored':>12} {'up/stored':>10} {'seconds':>8}", flush=True)
        for name, fn in writers:
            if keys[name] in args.skip:
                continue
            counts = [args.flushes] if name == "ours" or not args.peer_flushes \
                else args.peer_flushes
            for n in counts:
                row = fn(s3, n)
                if "error" in row:
                    print(f"{name:<20} missing: {row['error']}", flush=True)
                    break
                print(f"{name:<20} {n:>7,} {row['puts']:>8,} {row['requests']:>9,} "
                      f"{mb(row['uploaded']):>14} {mb(row['stored']):>12} "
                      f"{row['uploaded'] / max(1, row['stored']):>9.1f}x "
                      f"{row['seconds']:>8.1f}", flush=True)
        print(f"\nIdle server watching {args.runs} runs on S3 (nothing changes)\n", flush=True)
        if "idle-ours" not in args.skip:
            ours = idle_ours(s3, args.runs, args.window)
            print(f"ours: {ours['reloads']} idle reloads in {args.window:.0f} s (schedule "
                  f"scaled 0.05 s -> 0.8 s): {ours['requests']} requests, {ours['gets']} GETs; "
                  f"{ours['per_reload']:.2f} requests per idle reload")
            print(f"      at 5 s -> 80 s back-off: {ours['hourly_reloads']} reloads in the "
                  f"first hour -> {ours['hourly']:.0f} requests/hour (extrapolated)")
        if "idle-tb" not in args.skip:
            tb = idle_tensorboard(s3, args.runs, args.tb_window)
            if "error" in tb:
                print(f"TensorBoard 2.21: missing: {tb['error']}")
            else:
                print(f"TensorBoard 2.21 --load_fast=false, --reload_interval 5: "
                      f"{tb['requests']} requests ({tb['gets']} GETs) in {tb['window']:.0f} s "
                      f"-> {tb['hourly']:,.0f} requests/hour (measured window x "
                      f"{3600 / tb['window']:.0f})")


if __name__ == "__main__":
    main()
