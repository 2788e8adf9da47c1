"""``spawn`` over MPI: the ranks started by MPICH's ``mpiexec.gforker``, results in files.

The parent is no MPI process: it writes ``fn``, ``args`` and what a fresh interpreter needs
to find them (multiprocessing's own preparation data: sys.path, the working directory, the
main script) into a folder, runs ``mpiexec.gforker -n N python -m <this module> <folder>``
and reads back one result file per rank. A rank that raises writes its error and aborts the
job (``MPI_Abort``: no peer is left waiting); a rank killed by a signal leaves no file, and
the launcher's own report (``[0]1:Return code = 0, signaled with Killed``) names the signal.
gforker forks the ranks on this machine and opens no socket; MPICH is told to use shared
memory only (libfabric's ``shm`` provider), so nothing listens beyond this host.

Ranks that end without ``MPI_Finalize`` leave shared memory named after their PIDs, which
breaks a later job given the same PIDs (``mpi_shm``): the launcher is held until what its
PID left is cleared, each rank clears its own PID's before MPI starts, and the parent clears
the job's after it.
"""

from __future__ import annotations

import multiprocessing.spawn as mp_spawn
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from .errors import LOST_PEER, DistributedError
from .spawning import rank_variables, root_cause, still_running, unpicklable
from .mpi_shm import clear_endpoints, clear_world

LAUNCHER = "mpiexec.gforker"
#: MPICH on one host: shared memory only (its default netmods would listen on every interface)
LOCAL_ONLY = {"MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "shm"}
_REPORT = re.compile(r"^\[\d+\](\d+):Return code = (-?\d+)(?:, signaled with (.+?))?\s*$")
_SIGNALS = {signal.strsignal(s) or s.name: s for s in signal.Signals}
#: how gforker ends the other ranks once one died (SIGINT), or on the way out
LAUNCHER_ENDS = {signal.strsignal(s) for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM)}
#: the launcher waits for a line on stdin (the parent clears its PID's leftovers first);
#: the ranks then read an empty stdin, as multiprocessing's children do
_HELD = 'read go && exec "$@"'


def launcher() -> str | None:
    """MPICH's forking launcher beside this interpreter (the ``mpich`` wheel) or on PATH,
    when mpi4py is importable too; None otherwise."""
    try:
        import mpi4py  # noqa: F401  (found, not imported into MPI: the parent stays plain)
    except ModuleNotFoundError:
        return None
    here = os.path.join(os.path.dirname(sys.executable), LAUNCHER)
    return here if os.access(here, os.X_OK) else shutil.which(LAUNCHER)


def spawn_mpi(fn: Callable[..., Any], args: tuple, nprocs: int, env: dict[str, str],
              timeout_s: float | None) -> list[Any]:
    """``fn(*args)`` as ranks 0..nprocs-1 under MPI; results in rank order (see ``spawn``)."""
    exe = launcher()
    if exe is None:
        raise ModuleNotFoundError("spawn(backend='mpi') needs mpi4py and MPICH's "
                                  f"{LAUNCHER}: pip install 'visualdl[distributed]'",
                                  name="mpi4py")
    folder = tempfile.mkdtemp(prefix="visualdl-mpi-")
    try:
        with open(os.path.join(folder, "job.pkl"), "wb") as f:
            prep = mp_spawn.get_preparation_data("visualdl-rank")
            prep.pop("authkey", None)  # a secret of this process, and not picklable
            pickle.dump(prep, f)
            pickle.dump((fn, args), f)
        child_env = {**os.environ, **{k: v for k, v in LOCAL_ONLY.items()
                                      if k not in os.environ}, **env}
        cmd = [exe, "-n", str(nprocs), sys.executable, "-m", __name__, folder]
        _, reports, timed_out = run_launcher(cmd, child_env, folder, timeout_s)
        return _results(folder, nprocs, reports, timed_out, timeout_s)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_launcher(cmd: list[str], env: dict[str, str], folder: str,
                 timeout_s: float | None = None) -> tuple[int, dict[int, tuple], bool]:
    """Run the launcher ``cmd`` to its end, passing the ranks' stderr through: its exit
    status, its per-rank exit reports (rank -> (status, signal as reported, or None)) and
    whether ``timeout_s`` ended it. What the job left in shared memory is cleared after:
    the launcher's, and each rank's that noted its PID in ``folder`` (``pid-<pid>``)."""
    proc = None
    try:
        proc = start_launcher(cmd, env)
        reports: dict[int, tuple[int, str | None]] = {}
        reader = threading.Thread(target=_relay, args=(proc.stderr, reports), daemon=True)
        reader.start()
        timed_out = _wait(proc, timeout_s)
        reader.join(5)
        return proc.returncode, reports, timed_out
    finally:
        if proc is not None and proc.poll() is not None:  # ended: nothing of it is in use
            clear_world(proc.pid)
        for pid in _rank_pids(folder):
            clear_endpoints(pid)


def start_launcher(cmd: list[str], env: dict[str, str]) -> subprocess.Popen:
    """Start ``cmd`` (the launcher) once the segments a dead job of its PID left are gone:
    a shell holds that PID on a pipe until they are, then becomes the launcher."""
    proc = subprocess.Popen(["/bin/sh", "-c", _HELD, "sh", *cmd], env=env,
                            stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        clear_world(proc.pid)
    finally:
        proc.stdin.write("go\n")
        proc.stdin.close()
    return proc


def _rank_pids(folder: str) -> list[int]:
    """The PIDs the ranks noted on starting (``pid-<pid>`` files)."""
    try:
        return [int(n[4:]) for n in os.listdir(folder) if n.startswith("pid-")]
    except OSError:
        return []


def _wait(proc: subprocess.Popen, timeout_s: float | None) -> bool:
    """Wait for the launcher; past ``timeout_s`` (or on Ctrl-C, raised again) end it (it
    ends its ranks). True if the timeout ended it."""
    try:
        proc.wait(timeout_s)
        return False
    except subprocess.TimeoutExpired:
        _stop(proc)
        return True
    except KeyboardInterrupt:
        _stop(proc)
        raise


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _relay(stream: Any, reports: dict[int, tuple[int, str | None]]) -> None:
    """Pass the ranks' stderr through; keep the launcher's per-rank exit reports."""
    for line in stream:
        match = _REPORT.match(line)
        if match:
            reports[int(match.group(1))] = (int(match.group(2)), match.group(3))
        else:
            sys.stderr.write(line)


def _results(folder: str, nprocs: int, reports: dict[int, tuple[int, str | None]],
             timed_out: bool, timeout_s: float | None) -> list[Any]:
    """Results in rank order, or the root cause: a rank's own error (its file), else a rank
    that exited or was killed on its own, never the peers the launcher ended after it."""
    values: dict[int, Any] = {}
    failed: dict[int, tuple[int, str]] = {}
    for rank in range(nprocs):
        path = os.path.join(folder, f"rank-{rank}.pkl")
        if os.path.exists(path):
            with open(path, "rb") as f:
                ok, value = pickle.load(f)
            (values if ok else failed)[rank] = value
    # a rank that wrote its error aborted the job (MPI_Abort): the launcher then reports no
    # rank; one that exited on its own is reported with its status (if not 0)
    aborted = bool(failed)
    errors = any(LOST_PEER not in why for _, why in failed.values())  # not a peer's loss
    missing = [rank for rank in range(nprocs) if rank not in values and rank not in failed]
    if timed_out and missing:
        failed.update(still_running(missing, timeout_s))
    for rank in missing if not timed_out else ():
        code, signalled = reports.get(rank, (None, None))
        why = _no_result(code, signalled, errors or (aborted and code is None))
        failed[rank] = (rank, why)
    if failed:
        raise root_cause(failed)
    return [values[r] for r in range(nprocs)]


def reported_signal(reported: str) -> signal.Signals | None:
    """The signal the launcher's report names by its description ("Killed"), if known."""
    return _SIGNALS.get(reported)


def signal_name(reported: str) -> str:
    """``SIGKILL`` for the launcher's "Killed"; its own words for a signal not known."""
    sig = reported_signal(reported)
    return sig.name if sig else reported


def _no_result(code: int | None, signalled: str | None, after_peer: bool) -> str:
    """Why a rank left no file, from the launcher's report: ended by the launcher or by a
    peer's MPI_Abort (``after_peer``: it only lost its peers), else killed, else it exited
    on its own -- the root cause, as ``spawn`` over gloo names it."""
    if signalled in LAUNCHER_ENDS:
        return f"ended by the launcher after a peer {LOST_PEER}"
    if signalled is not None:
        return f"worker was killed by {signal_name(signalled)}"
    if after_peer:
        return f"ended after a peer {LOST_PEER}"
    status = "" if code is None else f" with status {code}"  # 0 is not reported
    return f"worker exited{status} without a result"


def _child(folder: str) -> None:
    """One rank: prepare like a multiprocessing child, run ``fn``, write the outcome.

    SIGINT ends the rank at once, as the signal's default: that is how the launcher stops
    the others when one died, and how Ctrl-C reaches every rank."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    clear_endpoints(os.getpid())  # a dead rank's region under this PID (before the main
    open(os.path.join(folder, f"pid-{os.getpid()}"), "wb").close()  # script may start MPI)
    try:  # the main script is imported again here, as a multiprocessing child does
        with open(os.path.join(folder, "job.pkl"), "rb") as f:
            mp_spawn.prepare(pickle.load(f))
            fn, args = pickle.load(f)
    except BaseException as exc:  # noqa: BLE001 - told to the parent, not only on stderr
        rank = int(os.environ.get("PMI_RANK", "0"))
        _write(folder, rank, (False, (rank, f"failed before running the job, importing the "
                                            f"main script: {type(exc).__name__}: {exc}\n"
                                            f"{traceback.format_exc()}")))
        from mpi4py import MPI

        _give_up(MPI.COMM_WORLD)
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    os.environ.update(rank_variables(rank, world.Get_size()))
    try:
        outcome = (True, fn(*args))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
        if isinstance(exc, DistributedError):
            about = rank if exc.rank is None else exc.rank
            outcome = (False, (about, f"{exc.detail}\n{traceback.format_exc()}"))
        else:
            outcome = (False, (rank, f"failed: {type(exc).__name__}: {exc}\n"
                                     f"{traceback.format_exc()}"))
    try:
        _write(folder, rank, outcome)
    except Exception as exc:  # noqa: BLE001 - an unpicklable result: say so, not "no result"
        outcome = (False, (rank, unpicklable(exc)))
        _write(folder, rank, outcome)
    if not outcome[0]:
        _give_up(world)


def _give_up(world: Any) -> None:
    """End the job after this rank's failure was written (never returns)."""
    sys.stderr.flush()
    time.sleep(0.2)  # let a peer that failed the same way write its own account
    world.Abort(1)
    os._exit(1)  # MPI_Abort may return once the launcher is told: never run on here


def _write(folder: str, rank: int, outcome: tuple) -> None:
    """Pickled whole before anything is written: a result that cannot be pickled leaves no
    torn file behind."""
    data = pickle.dumps(outcome)
    path = os.path.join(folder, f"rank-{rank}.pkl")
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    _child(sys.argv[1])
