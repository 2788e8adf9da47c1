"""``python -m visualdl.framework.distributed.launch --nproc_per_node 2 train.py ARGS``.

PaddlePaddle's ``python -m paddle.distributed.launch`` (and torchrun) for a training script:
the script runs as ``nprocs`` ranks of this machine, each finding its group with
``init_parallel_env`` as it would under Paddle's launcher. The same two ways as ``spawn``
(``--backend``): MPI where mpi4py and MPICH are installed (the ranks started by MPICH's
``mpiexec.gforker``, shared memory only), else gloo over 127.0.0.1, each rank told its place
by ``RANK``/``WORLD_SIZE``/``MASTER_ADDR``/``MASTER_PORT`` and Paddle's
``PADDLE_TRAINER_ID``/``PADDLE_TRAINERS_NUM``/``PADDLE_MASTER``.

Each rank runs the script through :func:`rank_main` (this module run with ``-m``): as
``python train.py ARGS`` would, with its output in ``--log_dir``'s ``workerlog.N`` when one
is given (Paddle's layout; as Paddle's launcher does, rank 0's log is also shown on the
console as it grows, and a failed rank's last lines when the job ends). Every rank gets
the same variables on either backend (``spawning.rank_variables``: ``RANK``/``WORLD_SIZE``,
Paddle's ``PADDLE_TRAINER_ID``/``PADDLE_TRAINERS_NUM``/``PADDLE_LOCAL_RANK``/...), for
scripts that read them, and with ``--devices`` its GPU id in ``FLAGS_selected_gpus``.
When a rank fails, the others are ended and the launcher exits with that rank's status,
naming it and why; no rank is left waiting for a dead peer.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Sequence

from .errors import LOST_PEER
from .spawning import (BACKENDS, THREAD_VARIABLES, WORKER_VARIABLE, exit_reason, free_port,
                       rank_variables)

__all__ = ["main", "rank_main", "build_parser"]

#: Set for each rank: where its output goes (a folder), and the job's folder, where it notes
#: its PID (MPI) and why it failed (``failed-<rank>``, read by the launcher).
LOG_DIR_VARIABLE = "VISUALDL_LAUNCH_LOG_DIR"
JOB_DIR_VARIABLE = "VISUALDL_LAUNCH_JOB_DIR"
#: ``--devices``' ids, one per rank: rank N's becomes its ``FLAGS_selected_gpus``
DEVICES_VARIABLE = "VISUALDL_LAUNCH_DEVICES"
PROG = "python -m visualdl.framework.distributed.launch"
SETTLE_S = 1.0  # the peers of a failed rank fail too, soon after: the first one is named
#: seconds a rank that noted its failure has to exit before it counts as failed anyway: torch's
#: gloo can hold a failed rank's interpreter at exit while a peer it waited for still runs
NOTED_EXIT_S = 5.0
TAIL_LINES = 20  # of a failed rank's log, shown when the job ends (Paddle's "error log")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Run a training script as several data-parallel ranks of "
                               "this machine (PaddlePaddle's paddle.distributed.launch).")
    parser.add_argument("--nproc_per_node", "--nproc-per-node", "--nprocs", dest="nprocs",
                        type=int, default=None, metavar="N",
                        help="ranks to start (default: one per --devices id, else 1; -1: one "
                             "per CPU core)")
    parser.add_argument("--devices", "--gpus", dest="devices", default=None, metavar="IDS",
                        help="comma-separated GPU ids, one rank per id; rank N's id is its "
                             "FLAGS_selected_gpus (ParallelEnv().device_id), as under "
                             "Paddle's launcher")
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="collectives: mpi (shared memory), gloo (TCP on 127.0.0.1, "
                             "needs torch) or auto, MPI where installed (default)")
    parser.add_argument("--log_dir", "--log-dir", dest="log_dir", default=None,
                        help="write each rank's output to LOG_DIR/workerlog.N; the "
                             "console shows rank 0's, and a failed rank's last lines")
    parser.add_argument("--threads_per_worker", "--threads-per-worker", type=int, default=1,
                        metavar="T", help="threads per rank for numba/OpenMP (default 1)")
    parser.add_argument("script", help="the training script")
    parser.add_argument("script_args", nargs=argparse.REMAINDER,
                        help="the script's own arguments")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the script's ranks; the exit status is 0, or that of the rank that failed first."""
    parser = build_parser()
    args = parser.parse_args(argv)
    nprocs, use_mpi = _checked(parser, args)
    env = {**os.environ, WORKER_VARIABLE: "1",
           **{v: str(args.threads_per_worker) for v in THREAD_VARIABLES}}
    echo = None
    if args.devices is not None:
        env[DEVICES_VARIABLE] = args.devices
    # Paddle's launcher gives each rank an endpoint of its own and tells every rank all of
    # them (scripts and Paddle's ParallelEnv read them); the collectives here need none
    env["PADDLE_TRAINER_ENDPOINTS"] = ",".join(f"127.0.0.1:{free_port()}"
                                               for _ in range(nprocs))
    if args.log_dir is not None:
        env[LOG_DIR_VARIABLE] = os.path.abspath(args.log_dir)
        echo = _Echo(_fresh_logs(args.log_dir, nprocs))
    rank_cmd = [sys.executable, "-m", __name__, os.path.abspath(args.script),
                *args.script_args]
    folder = env[JOB_DIR_VARIABLE] = tempfile.mkdtemp(prefix="visualdl-launch-")
    try:
        with echo or contextlib.nullcontext():
            failed = (_run_mpi(rank_cmd, nprocs, env) if use_mpi
                      else _run_gloo(rank_cmd, nprocs, env))
        if failed is None:
            return 0
        rank, code, why = _own_account(folder, failed)
    except KeyboardInterrupt:
        return 130
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    where = ""
    if args.log_dir is not None:
        log = os.path.join(args.log_dir, f"workerlog.{rank}")
        where = f" (its output: {log})"
        if rank != 0:  # rank 0's was shown as it came
            _show_tail(log, rank)
    print(f"{PROG.split()[-1]}: rank {rank} of {nprocs} {why}{where}; the other ranks were "
          f"ended", file=sys.stderr)
    return code if 0 < code < 256 else 1


def _fresh_logs(log_dir: str, nprocs: int) -> str:
    """Empty ``workerlog.N`` files for the ranks (made before they start, so the echo never
    reads one left by an earlier job); rank 0's path."""
    for rank in range(nprocs):
        open(os.path.join(log_dir, f"workerlog.{rank}"), "wb").close()
    return os.path.join(log_dir, "workerlog.0")


class _Echo:
    """Rank 0's log copied to this console as it grows, until the job ends (then the rest):
    Paddle's launcher shows it so, and a user watching the console sees the job progress."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._copy, name="launch-echo", daemon=True)

    def __enter__(self) -> _Echo:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def _copy(self) -> None:
        out = sys.stdout.buffer
        with open(self._path, "rb") as log:
            while True:
                last = self._done.is_set()  # read once more after the job ended
                chunk = log.read(1 << 16)
                if chunk:
                    out.write(chunk)
                    out.flush()
                elif last:
                    return
                else:
                    self._done.wait(0.1)


def _show_tail(log: str, rank: int) -> None:
    """The last lines of a failed rank's log (its traceback, most often) on stderr."""
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()[-TAIL_LINES:]
    except OSError:
        return
    if lines:
        print(f"--- the last lines of rank {rank}'s output ({log}) ---", *lines, "---",
              sep="\n", file=sys.stderr)


def _checked(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[int, bool]:
    """(ranks, whether over MPI), or a usage error before any rank starts."""
    ids = None
    if args.devices is not None:
        ids = [i.strip() for i in args.devices.split(",")]
        if not all(i.isdigit() for i in ids):
            parser.error(f"argument --devices: GPU ids separated by commas, such as 0,1; got "
                         f"{args.devices!r}")
        args.devices = ",".join(ids)
    nprocs = (len(ids) if ids else 1) if args.nprocs is None else args.nprocs
    nprocs = (os.cpu_count() or 1) if nprocs == -1 else nprocs
    if nprocs < 1:
        parser.error(f"argument --nproc_per_node: must be >= 1 (or -1), got {args.nprocs}")
    if ids is not None and nprocs != len(ids):
        parser.error(f"argument --devices: {len(ids)} ids ({args.devices}) for {nprocs} "
                     f"ranks (--nproc_per_node {args.nprocs}): give one id per rank")
    if args.threads_per_worker < 1:
        parser.error("argument --threads_per_worker: must be >= 1")
    if not os.path.isfile(args.script):
        parser.error(f"script not found: {args.script}")
    if os.environ.get(WORKER_VARIABLE) == "1":
        parser.error("already inside a rank of a launch or spawn: each rank would start "
                     "its own ranks")
    from . import mpi_launch

    found = mpi_launch.launcher() is not None
    if args.backend == "mpi" and not found:
        parser.error(f"--backend mpi needs mpi4py and MPICH's {mpi_launch.LAUNCHER}: "
                     "pip install 'visualdl[distributed]'")
    if args.log_dir is not None:
        try:
            os.makedirs(args.log_dir, exist_ok=True)
        except OSError as err:
            parser.error(f"argument --log_dir: cannot create {args.log_dir}: {err}")
    return nprocs, args.backend == "mpi" or (args.backend == "auto" and found)


def _own_account(folder: str, failed: tuple[int, int, str]) -> tuple[int, int, str]:
    """The failure to name: a rank's own account of its failure (``failed-<rank>``: its
    status and why), the first that is not the loss of a peer; else the failed rank's
    account of the peer it lost (which names that peer), else what the process watch saw."""
    accounts = {}
    for name in os.listdir(folder):
        if name.startswith("failed-"):
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                status, _, why = f.read().partition("\n")
            accounts[int(name[7:])] = (int(status) if status.isdigit() else 1, why.strip())
    own = sorted(r for r, (_, why) in accounts.items() if LOST_PEER not in why)
    rank = own[0] if own else failed[0]
    if rank not in accounts:
        return failed
    return (rank, *accounts[rank])


def _run_gloo(cmd: list[str], nprocs: int, env: dict[str, str]) -> tuple[int, int, str] | None:
    """The ranks as plain processes meeting at 127.0.0.1; the first failure, or None."""
    port = str(free_port())
    procs: list[subprocess.Popen] = []
    try:
        for rank in range(nprocs):
            rank_env = {**env, **rank_variables(rank, nprocs), "MASTER_ADDR": "127.0.0.1",
                        "MASTER_PORT": port, "PADDLE_MASTER": f"127.0.0.1:{port}"}
            procs.append(subprocess.Popen(cmd, env=rank_env))
        return _watch(procs, env.get(JOB_DIR_VARIABLE))
    finally:
        _end(procs)


def _watch(procs: list[subprocess.Popen], notes: str | None = None) -> tuple[int, int, str] | None:
    """Wait for every rank; return the first failure: a rank that exited with an error, or
    one that noted its failure in ``notes`` and has not exited ``NOTED_EXIT_S`` later."""
    noted: dict[int, float] = {}  # rank -> when its failure note was first seen
    while True:
        codes = [p.poll() for p in procs]
        bad = [(rank, code) for rank, code in enumerate(codes) if code not in (None, 0)]
        if bad:  # a rank killed by a signal before one that exited (most often its peer)
            rank, code = min(bad, key=lambda b: (b[1] > 0, b[0]))
            return rank, (code if code > 0 else 128 - code), exit_reason(code)
        if all(code == 0 for code in codes):
            return None
        now = time.monotonic()
        for rank, code in enumerate(codes):
            if code is None and notes and os.path.exists(os.path.join(notes, f"failed-{rank}")):
                if now - noted.setdefault(rank, now) > NOTED_EXIT_S:
                    return rank, 1, "failed and did not exit"  # its note names why
        time.sleep(0.05)


def _end(procs: list[subprocess.Popen]) -> None:
    """End the ranks still running (SIGTERM, then SIGKILL after a grace period)."""
    running = [p for p in procs if p.poll() is None]
    if running:
        deadline = time.monotonic() + SETTLE_S  # a peer that lost its rank may say so first
        while time.monotonic() < deadline and any(p.poll() is None for p in running):
            time.sleep(0.02)
    for p in running:
        if p.poll() is None:
            p.terminate()
    for p in running:
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _run_mpi(cmd: list[str], nprocs: int, env: dict[str, str]) -> tuple[int, int, str] | None:
    """The ranks under MPICH's forking launcher, shared memory only; the first failure as
    the launcher reports it, or None."""
    from . import mpi_launch

    env = {**{k: v for k, v in mpi_launch.LOCAL_ONLY.items() if k not in env}, **env}
    code, reports, _ = mpi_launch.run_launcher(
        [mpi_launch.launcher(), "-n", str(nprocs), *cmd], env, env[JOB_DIR_VARIABLE])
    if code == 0 and not any(c or sig for c, sig in reports.values()):
        return None
    return _first_mpi_failure(reports, code)


def _first_mpi_failure(reports: dict[int, tuple[int, str | None]],
                       code: int) -> tuple[int, int, str]:
    """The rank that failed on its own (not one the launcher ended after it)."""
    from .mpi_launch import LAUNCHER_ENDS, reported_signal, signal_name

    own = [(rank, c, sig) for rank, (c, sig) in sorted(reports.items())
           if (c or sig) and sig not in LAUNCHER_ENDS]
    if not own:
        return 0, code or 1, f"failed (the launcher exited with status {code})"
    rank, c, sig = own[0]
    if sig is None:
        return rank, c, f"exited with status {c}"
    found = reported_signal(sig)
    return rank, 128 + (found.value if found else 0), f"was killed by {signal_name(sig)}"


def rank_main(argv: Sequence[str] | None = None) -> int:
    """One rank: note its PID (MPI), send its output to its log file if asked, then run the
    script as ``python SCRIPT ARGS`` would (``__main__``, its folder first on sys.path)."""
    script, *script_args = list(sys.argv[1:] if argv is None else argv)
    job_dir = os.environ.pop(JOB_DIR_VARIABLE, "")
    if "PMI_RANK" in os.environ:  # under MPI: the same variables as the gloo ranks get
        os.environ.update(rank_variables(int(os.environ["PMI_RANK"]),
                                         int(os.environ.get("PMI_SIZE", "1"))))
        if job_dir:  # clear what a dead rank of this PID left, before MPI starts
            from .mpi_shm import clear_endpoints

            clear_endpoints(os.getpid())
            open(os.path.join(job_dir, f"pid-{os.getpid()}"), "wb").close()
    rank = os.environ.get("RANK", "0")
    endpoints = os.environ.get("PADDLE_TRAINER_ENDPOINTS", "").split(",")
    if int(rank) < len(endpoints):
        os.environ["PADDLE_CURRENT_ENDPOINT"] = endpoints[int(rank)]
    devices = os.environ.pop(DEVICES_VARIABLE, "")
    if devices:
        os.environ["FLAGS_selected_gpus"] = devices.split(",")[int(rank)]
    log_dir = os.environ.pop(LOG_DIR_VARIABLE, None)
    if log_dir:
        log = os.open(os.path.join(log_dir, f"workerlog.{rank}"),
                      os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
            os.dup2(log, stream.fileno())
        os.close(log)
    sys.argv = [script, *script_args]
    sys.path[0] = os.path.dirname(script)
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        status = _exit_status(stop.code)
        if status != 0:  # its peers may wait for it in a collective: end the job, say why
            if job_dir:
                _note(job_dir, rank, status, f"exited with status {status}")
            _abort_mpi(status)
        return status
    except KeyboardInterrupt:  # Ctrl-C, or the launcher ending this rank after a peer's
        return 130  # failure: not this rank's own (the script's with-blocks have closed)
    except BaseException as exc:  # noqa: BLE001 - shown as Python shows it, then the rank fails
        _print_from(script, exc)
        if job_dir:
            _note(job_dir, rank, 1, f"raised {type(exc).__name__}: {exc}".splitlines()[0])
        _abort_mpi(1)
        return 1
    return 0


def _print_from(script: str, exc: BaseException) -> None:
    """The traceback as ``python SCRIPT`` shows it: from the script's frames on."""
    tb = exc.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != script:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb or exc.__traceback__)
    sys.stderr.flush()


def _note(job_dir: str, rank: str, status: int, why: str) -> None:
    """This rank's account of its failure for the launcher: its exit status, then why."""
    try:
        with open(os.path.join(job_dir, f"failed-{rank}"), "w", encoding="utf-8") as f:
            f.write(f"{status}\n{why}")
    except OSError:
        pass  # the launcher then names the failure by the exit status


def _abort_mpi(status: int) -> None:
    """A failed rank of an MPI job ends the job (its peers may wait in a collective)."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the launcher ends the job with it
        mpi.COMM_WORLD.Abort(status)
        os._exit(status)  # MPI_Abort may return once the launcher is told: never run on


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(rank_main())
