"""Write/read benchmark: visualdl (ours) against VisualDL 2.5.3 and tensorboardX 2.6.

    python bench/write_read.py            # the issue's workloads, 3 repeats, medians
    python bench/write_read.py --quick    # smaller sizes, 1 repeat: a smoke run
    python bench/write_read.py --workloads W4   # only the TensorBoard event-file read

Workloads (issue 2, "Benchmark"):
  W1  1,000,000 add_scalar calls (10 tags x 100,000 steps), write including close();
      then every point read back in a fresh process, with that process's peak RSS.
  W2  5,000 add_histogram calls of 10,000 float32 values each.
  W3  400 add_image calls of 64x64x3 uint8, with the caller thread's cost per call.
  W4  W1's 1,000,000 points as TensorBoard event files (``events.out.tfevents.*``), read
      back completely by our LogReader in a fresh process; the peers read the same files:
      TensorBoard 2.21's ``EventAccumulator`` (size guidance 0 = keep everything) and
      ``tbparse`` (a pandas DataFrame of every scalar, on the same EventAccumulator). The
      files are tensorboardX's W1 output; when tensorboardX is missing, this script writes
      the same events (one ``simple_value`` per Event, as tensorboardX and torch write
      ``add_scalar``) with our event_pb2.

Ours runs in this interpreter. Each peer runs in a venv of its own that this script
creates once and caches under ``<repo>/.bench/venvs/``: PyPI's ``visualdl`` has our
import name, so it can only be imported where ours is not. Every measurement is a fresh
subprocess (``bench/_peers/worker.py``) run from a folder outside the repository; the
peers run with ``python -I`` (no PYTHONPATH, no script folder on sys.path), and the
worker reports which package file it imported so that a mix-up is caught, not measured.
A peer that cannot be installed or run is reported as missing, with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH_DIR = REPO / ".bench"
VENV_DIR = BENCH_DIR / "venvs"
RUNS_DIR = BENCH_DIR / "runs"
WORKER = REPO / "bench" / "_peers" / "worker.py"
RESULT_PREFIX = "BENCH-RESULT "

FULL_SIZES = {"w1_tags": 10, "w1_steps": 100_000, "w2_calls": 5_000, "w2_values": 10_000,
              "w3_calls": 400}
QUICK_SIZES = {"w1_tags": 10, "w1_steps": 2_000, "w2_calls": 200, "w2_values": 10_000,
               "w3_calls": 40}
WORKER_TIMEOUT_S = 1800  # tensorboardX needs a few minutes for W1; a hang must not block
PIP_TIMEOUT_S = 1200


@dataclass(frozen=True)
class VenvSpec:
    """A peer's virtual environment: what pip installs into it, and what must import."""

    name: str
    requirements: tuple[str, ...]
    module: str


# VisualDL 2.5.3 needs no pins on Python 3.11: it imports and runs with the current
# numpy (2.x) and protobuf (its record_pb2 is protoc >= 3.20 gencode, so protobuf 4+
# loads it with the fast upb backend). Pinning protobuf<4 would be wrong here: 3.20.x
# has no CPython 3.11 wheel with the C extension, so VisualDL would fall back to
# pure-Python protobuf and look slower than it is for its users.
VISUALDL = VenvSpec("visualdl-2.5.3", ("visualdl==2.5.3",), "visualdl")

# tensorboardX 2.6 and tensorboard 2.21.0 cannot share a venv: tensorboardX 2.6
# requires protobuf<4, tensorboard 2.21.0 requires protobuf>=6.31.1 (pip reports
# ResolutionImpossible). So tensorboardX writes in one venv and TensorBoard's
# EventAccumulator reads in another; each process only ever needs one of them.
# - protobuf<4 resolves to 3.20.3, which has no CPython 3.11 C extension: tensorboardX
#   runs on pure-Python protobuf, exactly as a user on 3.11 gets it (its old gencode
#   cannot load under protobuf 4+ except in pure-Python mode, so there is no faster way).
# - numpy<2.4: tensorboardX 2.6's scalar() calls float() on a 1-element 1-d array,
#   deprecated since NumPy 1.25 and a TypeError since NumPy 2.4.
# - pillow: tensorboardX imports PIL for add_image but does not declare it.
TENSORBOARDX = VenvSpec("tensorboardx-2.6", ("tensorboardX==2.6", "numpy<2.4", "pillow"),
                        "tensorboardX")
TENSORBOARD = VenvSpec("tensorboard-2.21.0", ("tensorboard==2.21.0",), "tensorboard")
# tbparse reads through TensorBoard's EventAccumulator (and builds a pandas DataFrame).
TBPARSE = VenvSpec("tbparse-0.0.9", ("tbparse==0.0.9", "tensorboard==2.21.0"), "tbparse")


@dataclass
class System:
    """One contestant: the interpreters that write and read, and the worker's names."""

    key: str
    label: str
    write_python: str | None = None
    read_python: str | None = None
    write_as: str = ""
    read_as: str = ""
    isolated: bool = True
    missing_write: str | None = None
    missing_read: str | None = None


@dataclass
class Cell:
    """All repeats of one (workload, phase, system), or why there are none."""

    runs: list[dict] = field(default_factory=list)
    failure: str | None = None


PHASES = (("W1", "write"), ("W1", "read"), ("W2", "write"), ("W3", "write"), ("W4", "read"))


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def peer_env() -> dict[str, str]:
    """The environment without anything that could put our package on a peer's path."""
    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PYTHONUSERBASE"):
        env.pop(name, None)
    return env


def ours_env() -> dict[str, str]:
    """Ours imports from this checkout even where it was not ``pip install -e``'d."""
    env = peer_env()
    env["PYTHONPATH"] = str(REPO)
    return env


def last_error_line(text: str) -> str:
    """The line of pip's or Python's output that says what went wrong."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    useful = [line for line in lines if not line.startswith("WARNING")]
    return (errors or useful or ["(no output)"])[-1][:300]


def is_our_package(path: str) -> bool:
    """True for a file of this checkout's ``visualdl`` (the venvs under .bench/ are not)."""
    return Path(path).resolve().is_relative_to(REPO / "visualdl")


# -- peer venvs -------------------------------------------------------------------------
def ensure_venv(spec: VenvSpec, workdir: str) -> tuple[str | None, str | None]:
    """Create (once) and check the venv; returns (python, None) or (None, why not)."""
    path = VENV_DIR / spec.name
    python = path / "bin" / "python"
    stamp = path / "bench-requirements.json"
    wanted = json.dumps(list(spec.requirements))
    if not (python.exists() and stamp.exists() and stamp.read_text() == wanted):
        shutil.rmtree(path, ignore_errors=True)
        log(f"creating {path} with pip install {' '.join(spec.requirements)} ...")
        steps = ([sys.executable, "-m", "venv", str(path)],
                 [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                  *spec.requirements])
        for command in steps:
            try:
                done = subprocess.run(command, cwd=workdir, env=peer_env(), text=True,
                                      capture_output=True, timeout=PIP_TIMEOUT_S)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return None, f"{command[2]} failed: {exc}"
            if done.returncode != 0:
                return None, f"{command[2]} failed: {last_error_line(done.stderr + done.stdout)}"
    problem = check_import(str(python), spec.module, workdir)
    if problem:
        return None, problem
    stamp.write_text(wanted)
    return str(python), None


def check_import(python: str, module: str, workdir: str) -> str | None:
    """The peer must import, and from its venv, never from this checkout."""
    code = f"import {module}; print({module}.__file__)"
    try:
        done = subprocess.run([python, "-I", "-c", code], cwd=workdir, env=peer_env(),
                              text=True, capture_output=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"import {module} failed: {exc}"
    if done.returncode != 0:
        return f"import {module} failed: {last_error_line(done.stderr)}"
    if is_our_package(done.stdout.strip()):
        return f"import {module} found this checkout ({done.stdout.strip()}), not the peer"
    return None


def make_systems(names: list[str], workdir: str) -> list[System]:
    """Ours always; each requested peer with its venvs, or with the reason it is missing."""
    systems = [System("ours", "visualdl (ours)", sys.executable, sys.executable,
                      "ours", "ours", isolated=False)]
    if "visualdl" in names:
        python, why = ensure_venv(VISUALDL, workdir)
        systems.append(System("visualdl", "VisualDL 2.5.3", python, python, "visualdl",
                              "visualdl", missing_write=why, missing_read=why))
    if "tensorboardx" in names:
        writer, why_w = ensure_venv(TENSORBOARDX, workdir)
        reader, why_r = ensure_venv(TENSORBOARD, workdir)
        systems.append(System("tensorboardx", "tensorboardX 2.6", writer, reader,
                              "tensorboardx", "tensorboard", missing_write=why_w,
                              missing_read=why_r))
    if "tbparse" in names:  # a reader only: W4's event files
        python, why = ensure_venv(TBPARSE, workdir)
        systems.append(System("tbparse", "tbparse 0.0.9", None, python, "", "tbparse",
                              missing_write="reads event files only (W4)", missing_read=why))
    return systems


# -- one measurement ----------------------------------------------------------------------
def run_worker(system: System, phase: str, workload: str, logdir: Path, sizes: dict,
               workdir: str) -> dict:
    """Run one measurement in a fresh process; raises RuntimeError saying why it failed."""
    python = system.write_python if phase == "write" else system.read_python
    as_name = system.write_as if phase == "write" else system.read_as
    flags = ["-I"] if system.isolated else []
    command = [python, *flags, str(WORKER), as_name, phase, workload, str(logdir),
               json.dumps(sizes)]
    env = peer_env() if system.isolated else ours_env()
    try:
        done = subprocess.run(command, cwd=workdir, env=env, text=True, capture_output=True,
                              timeout=WORKER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"timed out after {WORKER_TIMEOUT_S} s") from None
    results = [line for line in done.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if done.returncode != 0 or not results:
        raise RuntimeError(f"exit {done.returncode}: {last_error_line(done.stderr)}")
    result = json.loads(results[-1][len(RESULT_PREFIX):])
    if is_our_package(result["module_file"]) != (system.key == "ours"):
        raise RuntimeError(f"imported the wrong package: {result['module_file']}")
    return result


def bytes_on_disk(logdir: Path) -> int:
    return sum(f.stat().st_size for f in logdir.rglob("*") if f.is_file())


def measure_workload(system: System, workload: str, repeat: int, sizes: dict,
                     cells: dict, workdir: str, systems: list | None = None,
                     with_w4: bool = True) -> None:
    """Write (and for W1 read back) once, into a fresh logdir that is removed after."""
    write_cell = cells[workload, "write", system.key]
    if system.key == "tbparse":
        return  # a W4 reader only
    if system.missing_write:
        write_cell.failure = system.missing_write
        return
    logdir = RUNS_DIR / f"{system.key}-{workload}-{repeat}"
    shutil.rmtree(logdir, ignore_errors=True)
    logdir.mkdir(parents=True)
    try:
        try:
            result = run_worker(system, "write", workload, logdir, sizes, workdir)
        except RuntimeError as exc:
            write_cell.failure = str(exc)
            log(f"  {workload} write {system.label}: FAILED {exc}")
            return
        result["bytes"] = bytes_on_disk(logdir)
        write_cell.runs.append(result)
        log(f"  {workload} write {system.label}: {result['wall_s']:.2f} s")
        if workload == "W1":
            measure_read(system, logdir, sizes, cells, workdir)
            if system.key == "tensorboardx" and with_w4:
                measure_tfevents_read(logdir, sizes, cells, workdir, systems)
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


def measure_read(system: System, logdir: Path, sizes: dict, cells: dict,
                 workdir: str) -> None:
    read_cell = cells["W1", "read", system.key]
    if system.missing_read:
        read_cell.failure = system.missing_read
        return
    read_into(read_cell, system, "W1", logdir, sizes, workdir)


def read_into(cell, system: System, name: str, logdir: Path, sizes: dict,
              workdir: str) -> bool:
    """Read W1's logdir with ``system`` into ``cell`` (a failure is kept in the cell)."""
    try:
        result = run_worker(system, "read", "W1", logdir, sizes, workdir)
    except RuntimeError as exc:
        cell.failure = str(exc)
        log(f"  {name} read {system.label}: FAILED {exc}")
        return False
    result["bytes"] = bytes_on_disk(logdir)
    result["calls"] = result["points"]
    cell.runs.append(result)
    log(f"  {name} read {system.label}: {result['wall_s']:.2f} s, {result['rss_mb']:.0f} MB")
    return True


def measure_tfevents_read(logdir: Path, sizes: dict, cells: dict, workdir: str,
                          systems: list | None = None) -> None:
    """W4: ours reads event files; TensorBoard's EventAccumulator (its W1 read, when that
    ran on these files) and tbparse read the same files."""
    ours = System("ours", "visualdl (ours)", sys.executable, sys.executable, "ours", "ours",
                  isolated=False)
    if not read_into(cells["W4", "read", "ours"], ours, "W4", logdir, sizes, workdir):
        return
    for system in systems or []:
        if system.key not in ("tensorboardx", "tbparse"):
            continue
        cell = cells["W4", "read", system.key]
        if system.missing_read:
            cell.failure = system.missing_read
            continue
        peer = cells.get(("W1", "read", system.key))
        if system.key == "tensorboardx" and peer and peer.runs and \
                peer.runs[-1] not in cell.runs and (logdir.name.startswith("tensorboardx")):
            cell.runs.append(peer.runs[-1])  # EventAccumulator already read these files
            continue
        read_into(cell, system, "W4", logdir, sizes, workdir)


def measure_w4_only(repeat: int, sizes: dict, cells: dict, workdir: str,
                    systems: list) -> None:
    """W4 without the other workloads: tensorboardX writes W1's files (not measured)."""
    tbx = next((s for s in systems if s.key == "tensorboardx" and not s.missing_write), None)
    logdir = RUNS_DIR / f"w4-{repeat}"  # not "tfevents": TensorBoard takes such a path for a file
    shutil.rmtree(logdir, ignore_errors=True)
    logdir.mkdir(parents=True)
    try:
        if tbx is not None:
            log("  W4: tensorboardX writes the event files ...")
            run_worker(tbx, "write", "W1", logdir, sizes, workdir)
        else:
            log("  W4: tensorboardX missing; event files written by our encoder")
            write_tfevents(logdir, sizes)
        measure_tfevents_read(logdir, sizes, cells, workdir, systems)
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


def write_tfevents(logdir: Path, sizes: dict) -> None:
    """W1's points as tensorboardX/torch lay out ``add_scalar``: one Event per call."""
    import numpy as np

    if str(REPO) not in sys.path:  # this checkout's visualdl, as the "ours" worker gets
        sys.path.insert(0, str(REPO))
    from visualdl.format.framing import frame
    from visualdl.sources.tfevents import event_pb2 as pb

    tags = [f"w1/tag{i}" for i in range(sizes["w1_tags"])]
    values = np.random.default_rng(0).random(len(tags) * sizes["w1_steps"]).tolist()
    path = logdir / "events.out.tfevents.0.bench.0"
    with open(path, "wb") as f:
        f.write(frame(pb.Event(wall_time=time.time(),
                               file_version="brain.Event:2").SerializeToString()))
        i = 0
        for step in range(sizes["w1_steps"]):
            chunk = []
            for tag in tags:
                event = pb.Event(wall_time=time.time(), step=step, summary=pb.Summary(
                    value=[pb.Summary.Value(tag=tag, simple_value=values[i])]))
                chunk.append(frame(event.SerializeToString()))
                i += 1
            f.write(b"".join(chunk))


def measure_tfevents_fallback(repeat: int, sizes: dict, cells: dict, workdir: str,
                              systems: list | None = None) -> None:
    """W4 without tensorboardX: our own encoder writes the event files."""
    logdir = RUNS_DIR / f"w4-{repeat}"  # not "tfevents": TensorBoard takes such a path for a file
    shutil.rmtree(logdir, ignore_errors=True)
    logdir.mkdir(parents=True)
    try:
        write_tfevents(logdir, sizes)
        measure_tfevents_read(logdir, sizes, cells, workdir, systems)
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


# -- summary --------------------------------------------------------------------------------
def median_of(cell: Cell, key: str) -> float | None:
    values = [run[key] for run in cell.runs if run.get(key) is not None]
    return statistics.median(values) if values else None


def calls_per_s(cell: Cell) -> float | None:
    wall = median_of(cell, "wall_s")
    return cell.runs[0]["calls"] / wall if wall else None


def ratio(ours: Cell, peer: Cell, phase: str) -> float | None:
    """Write: ours calls/s over the peer's; read: the peer's time over ours."""
    if phase == "write":
        a, b = calls_per_s(ours), calls_per_s(peer)
        return a / b if a and b else None
    a, b = median_of(peer, "wall_s"), median_of(ours, "wall_s")
    return a / b if a and b else None


def expected_calls(workload: str, sizes: dict) -> int:
    if workload in ("W1", "W4"):
        return sizes["w1_tags"] * sizes["w1_steps"]
    return sizes["w2_calls"] if workload == "W2" else sizes["w3_calls"]


def row_cells(cell: Cell, workload: str, phase: str, sizes: dict) -> list[str]:
    """The numeric columns of one table row (empty when the cell has no runs)."""
    if not cell.runs:
        return ["-"] * 6
    wall = median_of(cell, "wall_s")
    spread = (max(r["wall_s"] for r in cell.runs) - min(r["wall_s"] for r in cell.runs)) / wall
    calls = cell.runs[0]["calls"]
    caller = median_of(cell, "caller_s")
    caller_us = f"{caller / calls * 1e6:,.1f}" if caller is not None else "-"
    rate = f"{calls / wall:,.0f}"
    if calls != expected_calls(workload, sizes):
        rate += f" ({calls:,} of {expected_calls(workload, sizes):,}!)"
    return [f"{wall:,.3f}", f"±{spread * 50:.0f}%", rate, caller_us,
            f"{median_of(cell, 'bytes') / 2**20:,.2f}", f"{median_of(cell, 'rss_mb'):,.0f}"]


def print_table(systems: list[System], cells: dict, sizes: dict,
                workloads: set | None = None) -> None:
    header = ["workload", "system", "wall s", "range", "calls/s", "caller µs/call",
              "disk MB", "peak RSS MB", "ours/peer"]
    rows = []
    for workload, phase in PHASES:
        if workloads and workload not in workloads:
            continue
        ours = cells[workload, phase, "ours"]
        for system in systems:
            if system.key == "tbparse" and workload != "W4":
                continue  # a W4 reader only
            cell = cells[workload, phase, system.key]
            label = system.label
            if workload == "W4" and system.key == "tensorboardx":
                label = "TensorBoard EventAccumulator"
            if system.key == "ours":
                versus = ""
            else:
                value = ratio(ours, cell, phase)
                versus = f"{value:.1f}x" if value else "-"
            rows.append([f"{workload} {phase}", label,
                         *row_cells(cell, workload, phase, sizes), versus])
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    lines = ["  ".join(str(c).rjust(w) if i > 1 else str(c).ljust(w)
                       for i, (c, w) in enumerate(zip(r, widths))) for r in [header] + rows]
    print(lines[0])
    print("-" * len(lines[0]))
    print("\n".join(lines[1:]))


def print_failures(systems: list[System], cells: dict) -> None:
    """Say why a peer (or a phase of one) has no numbers, once per distinct reason."""
    seen = set()
    for workload, phase in PHASES:
        for system in systems:
            failure = cells[workload, phase, system.key].failure
            if system.key == "tbparse" and workload != "W4":
                continue
            if failure and (system.key, failure) not in seen:
                seen.add((system.key, failure))
                print(f"  {system.label} {workload} {phase}: missing: {failure}")


def target_line(name: str, value: float | None, unit: str, target: str,
                passed: bool | None, missing: str = "") -> str:
    shown = f"{value:,.1f}{unit}" if value is not None else "n/a"
    verdict = "PASS" if passed else "MISS" if passed is not None else f"n/a {missing}"
    return f"  {name:<54} {shown:>10}   target {target:<10} {verdict}"


def print_targets(cells: dict, workloads: set | None = None) -> None:
    """Issue 2's targets, each computed from this run's medians."""
    def cell(workload: str, phase: str, key: str) -> Cell:
        return cells.get((workload, phase, key), Cell())  # a peer left out (--peers)

    why = "(VisualDL 2.5.3 missing)"
    w1w = ratio(cell("W1", "write", "ours"), cell("W1", "write", "visualdl"), "write")
    w1r = ratio(cell("W1", "read", "ours"), cell("W1", "read", "visualdl"), "read")
    rss = median_of(cell("W1", "read", "ours"), "rss_mb")
    w2w = ratio(cell("W2", "write", "ours"), cell("W2", "write", "visualdl"), "write")
    w3 = cell("W3", "write", "ours")
    w3_us = (median_of(w3, "caller_s") / w3.runs[0]["calls"] * 1e6) if w3.runs else None
    lines = [
        target_line("W1 write: ours/VisualDL calls/s", w1w, "x", ">= 50x",
                    None if w1w is None else w1w >= 50, why),
        target_line("W1 read-all: VisualDL time / ours", w1r, "x", ">= 40x",
                    None if w1r is None else w1r >= 40, why),
        target_line("W1 read-all: ours peak RSS", rss, " MB", "<= 150 MB",
                    None if rss is None else rss <= 150, "(ours failed)"),
        target_line("W2 write: ours/VisualDL calls/s", w2w, "x", ">= 2x",
                    None if w2w is None else w2w >= 2, why),
        target_line("W3: ours caller-thread cost per image", w3_us, " µs", "<= 50 µs",
                    None if w3_us is None else w3_us <= 50, "(ours failed)"),
    ]
    w4 = cell("W4", "read", "ours")
    for key, name in (("tensorboardx", "EventAccumulator"), ("tbparse", "tbparse")):
        r = ratio(w4, cell("W4", "read", key), "read")
        lines.append(target_line(f"W4 read-all: {name} time / ours (issue 12)", r, "x",
                                 ">= 10x", None if r is None else r >= 10,
                                 f"({name} missing)"))
    rss4 = median_of(w4, "rss_mb")
    lines.append(target_line("W4 read-all: ours peak RSS (issue 12)", rss4, " MB",
                             "<= 150 MB", None if rss4 is None else rss4 <= 150,
                             "(ours failed)"))
    if workloads:  # only the targets of the workloads that ran
        lines = [line for line in lines if line.split()[0] in workloads]
    print("\n".join(lines))


def check_same_inputs(systems: list[System], cells: dict) -> None:
    """Every system must have been fed the same data; say so loudly if not."""
    for workload, phase in PHASES:
        digests = {run["digest"] for s in systems
                   for run in cells[workload, phase, s.key].runs if "digest" in run}
        if len(digests) > 1:
            print(f"  WARNING: {workload} inputs differ between systems: {sorted(digests)}")


def describe(system: System, cells: dict) -> str:
    """Which package versions, from where, actually wrote and read."""
    seen: dict[str, str] = {}
    for (_, phase, key), cell in cells.items():
        for run in cell.runs[:1]:
            if key == system.key:
                seen.setdefault(phase, f"{run['version']} ({Path(run['module_file']).parent})")
    return "; ".join(f"{phase}: {text}" for phase, text in sorted(seen.items(),
                                                                  reverse=True)) or "no runs"


def print_report(systems: list[System], cells: dict, sizes: dict, repeats: int,
                 quick: bool, started: float, workloads: set | None = None) -> None:
    print()
    kind = "QUICK smoke run (reduced sizes; not the issue's workload)" if quick else "full run"
    print(f"visualdl write/read benchmark: {kind}, median of {repeats} repeat(s), "
          f"each a fresh process")
    print(f"sizes: W1 {sizes['w1_tags']} tags x {sizes['w1_steps']:,} steps; "
          f"W2 {sizes['w2_calls']:,} x {sizes['w2_values']:,} float32; "
          f"W3 {sizes['w3_calls']:,} x 64x64x3 uint8")
    for system in systems:
        print(f"  {system.label}: {describe(system, cells)}")
    print()
    print_table(systems, cells, sizes, workloads)
    print()
    print("range = (max-min)/2 of the repeats' wall times, as % of the median. Read rows: "
          "calls/s = points/s.\nWrite rows: wall includes the writer's creation and close(); "
          "caller µs/call is the\ntime in the add_* calls only (W1: the loop before close()). "
          "Peak RSS of a write includes\nits pre-generated input (W2: 200 MB). "
          "ours/peer: write = calls/s ratio, read = time ratio.")
    print_failures(systems, cells)
    check_same_inputs(systems, cells)
    print()
    print("Targets (issues 2 and 12), from this run:")
    print_targets(cells, workloads)
    print()
    print(f"total runtime: {time.perf_counter() - started:,.0f} s")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="1 repeat and smaller sizes: a smoke run")
    parser.add_argument("--repeats", type=int, default=None,
                        help="repeats per measurement (default 3, or 1 with --quick)")
    parser.add_argument("--peers", default="visualdl,tensorboardx,tbparse",
                        help="comma-separated peers to run: visualdl,tensorboardx,tbparse "
                             "(or none)")
    parser.add_argument("--workloads", default="W1,W2,W3,W4",
                        help="comma-separated workloads to run (default: all)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    started = time.perf_counter()
    args = parse_args(argv)
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    repeats = args.repeats or (1 if args.quick else 3)
    workdir = tempfile.mkdtemp(prefix="visualdl-bench-")  # cwd outside the repository
    try:
        systems = make_systems([p for p in args.peers.split(",") if p], workdir)
        workloads = {w.strip().upper() for w in args.workloads.split(",") if w.strip()}
        cells = {(w, p, s.key): Cell() for w, p in PHASES for s in systems}
        for repeat in range(1, repeats + 1):
            log(f"repeat {repeat}/{repeats}")
            for workload in ("W1", "W2", "W3"):
                if workload not in workloads:
                    continue
                for system in systems:  # interleaved, so drifting load hits all alike
                    measure_workload(system, workload, repeat, sizes, cells, workdir,
                                     systems, with_w4="W4" in workloads)
            if "W4" in workloads and "W1" not in workloads:
                measure_w4_only(repeat, sizes, cells, workdir, systems)
            elif "W4" in workloads and not cells["W4", "read", "ours"].runs[repeat - 1:]:
                log("  W4: tensorboardX missing; event files written by our encoder")
                measure_tfevents_fallback(repeat, sizes, cells, workdir, systems)
        print_report(systems, cells, sizes, repeats, args.quick, started, workloads)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(RUNS_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
