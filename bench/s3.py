"""Object-storage benchmark on a real S3 API (moto's server on 127.0.0.1): what writing a
run and watching idle runs cost in requests and bytes.

    python bench/s3.py                       # everything: 10,000 flushes (the peers take
                                             # ~10 min each); 100 idle runs; 20,000 segments
    python bench/s3.py --flushes 2000        # shorter
    python bench/s3.py --skip tbx torch      # parts to leave out (see --skip)

Every number comes from the S3 server's request log (``visualdl.storage.testing.LocalS3``
wraps moto's WSGI app and logs method, path and bytes of every request), not from the
clients' own accounting.

Part 1, writing: one training run of ``--flushes`` steps; each step logs ``TAGS`` (four
scalars, what a training loop's logging callback writes) and flushes (the worst case for an
object store: many small flushes). Each writer runs in a child process, to the same
``s3://`` URL, through its own S3 path:
  ours                     LogWriter(logdir="s3://..."): one new segment object per flush
  tensorboardX             SummaryWriter("s3://...") (boto3): ``flush()`` uploads the whole
                           event file again
  torch.utils.tensorboard  SummaryWriter(log_dir="s3://..."): TensorBoard 2.21's
                           EventFileWriter through its TF-free gfile stub, whose
                           S3FileSystem has no ``append``: each flush rewrites the object
Measured, not assumed: PUTs, all requests, bytes uploaded, and the size of what is stored.
The peers first write a ``--probe`` run (1,000 flushes), from which the full run's bytes
are estimated (x100 for 10x the flushes: quadratic) before it is measured.

Part 2, idle: 100 runs on S3 (ours: segments; TensorBoard: the same points as event
files), nothing changing. Ours: the server's provider reloads with back-off (5 s doubling
to 80 s); measured over a shortened window with the schedule scaled down (0.05 s -> 0.8 s)
for the requests per idle reload and the reloads made, then extrapolated to one hour with
the real schedule (5, 10, 20, 40, then 80 s). TensorBoard 2.21 (``--load_fast=false``: its
Rust data server cannot read s3://) is run for ``--tb-window`` seconds at its default
``--reload_interval 5`` and its requests are scaled to an hour.

Part 3, many segments: one run of ``--segments`` segments (stored straight into moto); the
requests of an idle reload: ours (S3 pages of segments the last listing showed are skipped,
see ``visualdl.storage.listing``) vs a full recursive listing (s3fs ``find``, 1,000 keys a
page: what the reader did before).
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

#: What each step of the training run logs before its flush: a few scalars, as a training
#: loop's logging callback does (the payload per flush is realistic, not one number).
TAGS = ("train/loss", "train/acc", "train/lr", "train/grad_norm")

# Each writer runs in a child process of its own (the S3 server keeps this one), with the
# same loop: every step adds the TAGS, then flushes.
_LOOP = """
import sys, time
url, n = sys.argv[1], int(sys.argv[2])
tags = {tags!r}
{open}
t = time.perf_counter()
for step in range(n):
    for k, tag in enumerate(tags):
        w.add_scalar(tag, (k + 1.0) / (step + 1), step)
    w.flush()
w.close()
print(time.perf_counter() - t)
"""
WRITERS = {
    # ours: one new segment object per flush
    "ours": "from visualdl import LogWriter\n"
            "w = LogWriter(logdir=url, flush_secs=10**6)",
    # tensorboardX's own S3 path (boto3): flush() uploads the whole event file again
    "tensorboardX": "from tensorboardX import SummaryWriter\n"
                    "w = SummaryWriter(url, flush_secs=10**6, max_queue=10**9)",
    # torch.utils.tensorboard: TensorBoard 2.21's EventFileWriter through its TF-free gfile
    # stub, whose S3 filesystem cannot append: each flush rewrites the whole object
    "torch.utils.tensorboard": "from torch.utils.tensorboard import SummaryWriter\n"
                               "w = SummaryWriter(log_dir=url, max_queue=10**9, "
                               "flush_secs=10**6)",
}


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


def write_run(s3: LocalS3, name: str, flushes: int, timeout: float = 7200) -> dict:
    """One training run of ``flushes`` flushes by writer ``name`` in a child process;
    requests and bytes from the S3 server's log, the size stored from a listing."""
    prefix = f"{name.split('.')[0]}-{uuid.uuid4().hex[:6]}"
    code = _LOOP.format(tags=TAGS, open=WRITERS[name])
    # tensorboardX and TensorBoard's gfile read S3_ENDPOINT; boto3 AWS_ENDPOINT_URL
    env = dict(os.environ, S3_ENDPOINT=s3.endpoint, PYTHONPATH=str(REPO), **s3.env())
    mark = s3.mark()
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, f"s3://{BUCKET}/{prefix}/run",
                           str(flushes)], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=tempfile.gettempdir())
    seconds = time.perf_counter() - t
    if proc.returncode:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    loop = float(proc.stdout.strip().splitlines()[-1])
    return dict(summarize(s3.since(mark), stored_bytes(s3, prefix)), seconds=seconds,
                loop=loop)


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


def idle_segments(s3: LocalS3, segments: int) -> dict:
    """Requests per idle reload of one run of ``segments`` segments: ours (S3 pages of
    known segments skipped) vs a full recursive listing (s3fs ``find``: what the reader did
    before, and what any fsspec reader does)."""
    import fsspec

    from visualdl import LogReader, LogWriter

    prefix = f"segs-{uuid.uuid4().hex[:6]}"
    scratch = f"memory://bench-{prefix}"
    with LogWriter(logdir=f"{scratch}/run", flush_secs=10**6) as w:  # made in memory...
        for step in range(segments):
            w.add_scalar("loss", 1.0 / (step + 1), step)
            w.flush()
    mem = fsspec.filesystem("memory")
    objects = {path.rsplit("/", 1)[-1]: mem.cat_file(path)
               for path in mem.find(scratch.split("://", 1)[1])}
    t = time.perf_counter()
    _put_into_moto({f"{prefix}/run/{name}": data for name, data in objects.items()}, s3)
    upload = time.perf_counter() - t
    t = time.perf_counter()
    reader = LogReader(f"s3://{BUCKET}/{prefix}")
    first = time.perf_counter() - t
    assert reader.scalars("run", "loss").steps.size == segments
    ours, seconds = [], []
    for _ in range(3):
        mark = s3.mark()
        t = time.perf_counter()
        reader.reload()
        seconds.append(time.perf_counter() - t)
        ours.append(len(s3.since(mark)))
    import s3fs

    fs = s3fs.S3FileSystem(endpoint_url=s3.endpoint)
    full = []
    for _ in range(3):
        fs.invalidate_cache()
        mark = s3.mark()
        fs.find(f"{BUCKET}/{prefix}", detail=True)
        full.append(len(s3.since(mark)))
    return {"segments": segments, "upload": upload, "first": first, "ours": ours,
            "seconds": sorted(seconds)[1], "full": full}


def _put_into_moto(objects: dict[str, bytes], s3: LocalS3) -> None:
    """Store objects straight into moto's in-process S3 (not over HTTP: this set-up is not
    what is measured, and moto takes ~25 ms a request here); over HTTP if that fails."""
    try:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
        for key, data in sorted(objects.items()):
            backend.put_object(BUCKET, key, data)
    except (ImportError, KeyError, AttributeError, TypeError):
        from concurrent.futures import ThreadPoolExecutor

        import boto3

        client = boto3.client("s3", endpoint_url=s3.endpoint, region_name="us-east-1")
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda kv: client.put_object(Bucket=BUCKET, Key=kv[0], Body=kv[1]),
                          sorted(objects.items())))


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mb(n: float) -> str:
    return f"{n / 1e6:,.2f} MB"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flushes", type=int, default=10_000,
                        help="flushes of the training run, for every writer (default 10,000)")
    parser.add_argument("--probe", type=int, default=1_000,
                        help="the peers first write a run of this many flushes, from which "
                             "the bytes and time of --flushes are estimated (and which shows "
                             "the growth); 0: no probe")
    parser.add_argument("--segments", type=int, default=20_000,
                        help="segments of the run whose idle reloads are counted (part 3)")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--window", type=float, default=8.0,
                        help="seconds of the shortened idle window for ours")
    parser.add_argument("--tb-window", type=float, default=60.0,
                        help="seconds TensorBoard is watched while idle")
    parser.add_argument("--skip", nargs="*", default=[],
                        help="parts to skip: ours tbx torch idle-ours idle-tb segments")
    args = parser.parse_args(argv)
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    keys = {"ours": "ours", "tensorboardX": "tbx", "torch.utils.tensorboard": "torch"}
    with LocalS3() as s3:
        s3.make_bucket(BUCKET)
        print(f"\nWriting one run to s3:// (moto at {s3.endpoint}): N steps, each "
              f"{len(TAGS)} add_scalar then flush()\n", flush=True)
        print(f"{'writer':<24} {'N':>7} {'PUTs':>8} {'requests':>9} {'uploaded':>14} "
              f"{'stored':>12} {'up/stored':>10} {'loop s':>8}", flush=True)
        for name in WRITERS:
            if keys[name] in args.skip:
                continue
            counts = [args.flushes]
            if name != "ours" and 0 < args.probe < args.flushes:
                counts.insert(0, args.probe)
            for n in counts:
                row = write_run(s3, name, n)
                if "error" in row:
                    print(f"{name:<24} missing: {row['error']}", flush=True)
                    break
                print(f"{name:<24} {n:>7,} {row['puts']:>8,} {row['requests']:>9,} "
                      f"{mb(row['uploaded']):>14} {mb(row['stored']):>12} "
                      f"{row['uploaded'] / max(1, row['stored']):>9.1f}x "
                      f"{row['loop']:>8.1f}", flush=True)
                if n < args.flushes:  # the probe: what the full run will cost
                    k = args.flushes / n
                    print(f"{'':<24} estimate for {args.flushes:,}: ~{mb(row['uploaded'] * k * k)}"
                          f" uploaded (x{k * k:,.0f}: quadratic), >= {row['loop'] * k:,.0f} s",
                          flush=True)
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
        if "segments" not in args.skip:
            print(f"\nIdle reloads of one run of {args.segments:,} segments\n", flush=True)
            seg = idle_segments(s3, args.segments)
            print(f"(stored in moto in {seg['upload']:.0f} s; first load, each segment by a "
                  f"GET: {seg['first']:.1f} s)")
            print(f"{'listing':<34} {'requests per idle reload (3 reloads)':>40}")
            print(f"{'ours (pages of known segments skipped)':<34} "
                  f"{', '.join(map(str, seg['ours'])):>40}   "
                  f"(median reload {seg['seconds'] * 1000:.0f} ms)")
            print(f"{'full listing (s3fs find)':<34} {', '.join(map(str, seg['full'])):>40}")


if __name__ == "__main__":
    main()
