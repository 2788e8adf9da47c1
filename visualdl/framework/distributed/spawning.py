"""``spawn``: run ``fn`` in ``nprocs`` processes of this machine, one rank each (no Ray).

Two ways, one contract (``backend``): over MPI when mpi4py and MPICH's launcher are
installed (``visualdl[distributed]``; shared-memory collectives, the fast path on one
machine; visualdl.framework.distributed.mpi_launch), else over gloo: each child gets
``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR=127.0.0.1`` and a free ``MASTER_PORT`` in its
environment (so ``init_parallel_env`` finds its group) and
``threads_per_worker`` threads (``NUMBA_NUM_THREADS``/``OMP_NUM_THREADS``, set before the
child imports anything). The parent watches them: when one fails (an exception, or killed by
a signal) it ends the others and raises a ``DistributedError`` naming that rank and why --
no rank is left waiting for a dead peer. ``fn``'s return values come back in rank order.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import socket
import time
import traceback
from collections.abc import Callable
from typing import Any

from .errors import LOST_PEER, DistributedError

THREAD_VARIABLES = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                     "MKL_NUM_THREADS")


def rank_variables(rank: int, size: int) -> dict[str, str]:
    """What a launcher tells a rank of one machine about its place: torchrun's names and
    PaddlePaddle's launcher's, for scripts that read them directly."""
    r, n = str(rank), str(size)
    return {"RANK": r, "LOCAL_RANK": r, "WORLD_SIZE": n,
            "PADDLE_TRAINER_ID": r, "PADDLE_TRAINERS_NUM": n, "PADDLE_GLOBAL_RANK": r,
            "PADDLE_LOCAL_RANK": r, "PADDLE_RANK_IN_NODE": r, "PADDLE_GLOBAL_SIZE": n,
            "PADDLE_LOCAL_SIZE": n, "PADDLE_NNODES": "1"}


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _child(fn: Callable[..., Any], args: tuple, rank: int, results: Any) -> None:
    try:
        value = fn(*args)
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
        if isinstance(exc, DistributedError):  # it names its rank already (maybe another)
            about = rank if exc.rank is None else exc.rank
            results.put((rank, False, (about, f"{exc.detail}\n{traceback.format_exc()}")))
        else:
            results.put((rank, False, (rank, f"failed: {type(exc).__name__}: {exc}\n"
                                             f"{traceback.format_exc()}")))
        raise SystemExit(1) from None
    try:
        results.put((rank, True, value))
    except Exception as exc:  # noqa: BLE001 - put pickles first: nothing was sent
        results.put((rank, False, (rank, unpicklable(exc))))
        raise SystemExit(1) from None


def unpicklable(exc: BaseException) -> str:
    """Why a rank that returned sent nothing back: its result could not be pickled (the
    parent would otherwise only see a worker that exited without a result)."""
    return f"its result could not be pickled to send back: {type(exc).__name__}: {exc}"


def exit_reason(code: int | None) -> str:
    """How a process ended, from its exit code (negative: the signal that killed it)."""
    if code is not None and code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _before(code: int | None) -> str:
    """What an exit with no result and no signal most often means: the worker failed while
    importing the main script (its traceback is on stderr), before it could run ``fn``."""
    if code is None or code < 0:
        return ""
    return (" before reporting a result (its traceback is above; if it is from importing "
            "the main script, see that the script's own calls run under "
            "`if __name__ == \"__main__\":`)")


BACKENDS = ("auto", "mpi", "gloo")
#: Set in every worker ``spawn`` starts: a worker that calls ``spawn`` again is a script
#: run again on import in each worker (its call is not under ``if __name__ == "__main__":``)
WORKER_VARIABLE = "VISUALDL_SPAWN_WORKER"
NESTED = ("spawn() was called again inside a worker it started: each worker imports the main "
          "script, so a script that calls spawn() must do so under "
          "`if __name__ == \"__main__\":` (or in a function called from there)")


def spawn(fn: Callable[..., Any], args: tuple = (), nprocs: int = 2,
          threads_per_worker: int = 1, env: dict[str, str] | None = None,
          timeout_s: float | None = None, backend: str = "auto") -> list[Any]:
    """Run ``fn(*args)`` as ranks 0..nprocs-1 and return their results in rank order.

    ``fn`` must be importable by name (a module-level function): children start fresh
    (``spawn`` start method, safe with threads and Numba). ``timeout_s`` bounds the whole
    job (default: none; each collective has its own timeout, see ``init_parallel_env``).
    ``backend``: ``"mpi"`` (shared memory), ``"gloo"`` (TCP on 127.0.0.1, PyTorch's) or
    ``"auto"``, MPI where installed. ``nprocs=-1`` (Paddle's default): one rank per CPU
    core of this machine."""
    if nprocs == -1:
        nprocs = os.cpu_count() or 1
    if nprocs < 1:
        raise ValueError(f"nprocs must be >= 1 (or -1: one per CPU core), got {nprocs}")
    if os.environ.get(WORKER_VARIABLE) == "1":
        raise RuntimeError(NESTED)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    from . import mpi_launch

    if backend == "mpi" or (backend == "auto" and mpi_launch.launcher() is not None):
        threads = {v: str(threads_per_worker) for v in THREAD_VARIABLES}
        return mpi_launch.spawn_mpi(fn, args, nprocs,
                                    {**threads, WORKER_VARIABLE: "1", **(env or {})}, timeout_s)
    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    port = free_port()
    procs = []
    saved = dict(os.environ)
    try:
        for rank in range(nprocs):
            os.environ.update({**rank_variables(rank, nprocs), "MASTER_ADDR": "127.0.0.1",
                               "MASTER_PORT": str(port)})
            os.environ.update({v: str(threads_per_worker) for v in THREAD_VARIABLES})
            os.environ[WORKER_VARIABLE] = "1"
            os.environ.update(env or {})
            p = ctx.Process(target=_child, args=(fn, args, rank, results),
                            name=f"visualdl-rank{rank}", daemon=True)
            p.start()
            procs.append(p)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return _collect(procs, results, timeout_s)


def _collect(procs: list, results: Any, timeout_s: float | None) -> list[Any]:
    """Results in rank order; on a failure end the others and raise the root cause."""
    values: dict[int, Any] = {}
    failed: dict[int, tuple[int, str]] = {}
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    try:
        while len(values) < len(procs) and not failed:
            _drain(results, values, failed)
            for rank, p in enumerate(procs):
                if rank not in values and p.exitcode is not None:
                    _drain(results, values, failed)
                    if rank not in values and rank not in failed:
                        code = p.exitcode
                        failed[rank] = (rank, f"worker {exit_reason(code)}{_before(code)}")
            if deadline is not None and time.monotonic() > deadline and not failed:
                failed.update(still_running([r for r in range(len(procs)) if r not in values],
                                            timeout_s))
            time.sleep(0.01)
        if failed:  # the peers of a dead rank fail too, soon after: let them say so
            settle = time.monotonic() + 1.0
            while time.monotonic() < settle and any(p.exitcode is None for p in procs):
                _drain(results, values, failed)
                time.sleep(0.02)
            _drain(results, values, failed)
        return [values[r] for r in range(len(procs))] if not failed else []
    finally:
        for p in procs:
            if failed and p.is_alive():
                p.terminate()
        for p in procs:
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join()
        if failed:
            raise root_cause(failed)


def _drain(results: Any, values: dict[int, Any], failed: dict[int, tuple[int, str]]) -> None:
    while not results.empty():
        rank, ok, value = results.get()
        if ok:
            values[rank] = value
        else:
            failed[rank] = value  # (the rank it is about, what happened)


def still_running(ranks: list[int], timeout_s: float) -> dict[int, tuple[int | None, str]]:
    """The failure of a job whose ``ranks`` were still running at its timeout: one for all
    of them (a rank waiting in a collective for a stuck one runs on too, so blaming the
    first would often name the wrong one)."""
    if len(ranks) == 1:
        return {ranks[0]: (ranks[0], f"still running after the job's timeout_s={timeout_s:g} s")}
    names = ", ".join(map(str, ranks[:-1])) + f" and {ranks[-1]}"
    return {ranks[0]: (None, f"ranks {names} still running after the job's "
                             f"timeout_s={timeout_s:g} s")}


def root_cause(failed: dict[int, tuple[int | None, str]]) -> DistributedError:
    """The failure that started it: a rank that did not merely lose its peers. When every
    rank only lost peers (a collective's timeout: one waited for another that hung), the
    first is named alone: the others' losses are then the job ending, not its cause."""
    lost = [r for r, (_, why) in failed.items() if LOST_PEER in why]
    first = next((r for r in sorted(failed) if r not in lost), min(failed))
    others = [f"rank {r} then lost its peers" for r in sorted(lost)
              if r != first and first not in lost]
    tail = f" ({'; '.join(others)})" if others else ""
    about, why = failed[first]
    head, _, detail = why.partition("\n")
    return DistributedError(about, head + tail + ("\n" + detail if detail else ""))

