"""The MPI path in particular: a stuck rank times out naming its peer, a script started by
``mpiexec`` itself finds its world, and ``spawn`` refuses an unknown backend."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.framework.distributed import workers
from visualdl.framework.distributed import DistributedError, spawn
from visualdl.framework.distributed import mpi_launch, mpi_shm
from visualdl.framework.distributed.mpi_launch import LOCAL_ONLY, launcher
from visualdl.framework.distributed.mpi_shm import SHM_DIR, clear_endpoints

needs_mpi = pytest.mark.skipif(launcher() is None, reason="mpi4py and MPICH are not installed "
                                                          "(pip install 'visualdl[distributed]')")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@needs_mpi
def test_a_rank_that_never_arrives_times_out_naming_its_peer():
    start = time.monotonic()
    with pytest.raises(DistributedError) as err:
        spawn(workers.late_rank, args=(1, 60), nprocs=2, backend="mpi",
              env={"VISUALDL_DIST_TIMEOUT": "3"}, timeout_s=120)
    assert str(err.value).startswith("rank 0: all-gather failed: a peer (rank 1) left or did "
                                     "not answer within the 3 s timeout")
    assert "rank 1 then lost its peers" not in str(err.value)  # rank 1 hung: no loss of its
    assert time.monotonic() - start < 50  # rank 1's 60 s sleep was cut short


SCRIPT = """
import sys
import numpy as np
from visualdl import LogWriter
from visualdl.framework.distributed import init_parallel_env, get_rank, get_world_size
comm = init_parallel_env()
buffer = np.full(3, comm.rank + 1.0, np.float32)
comm.allreduce(buffer)
with LogWriter(logdir=sys.argv[1]) as w:
    w.add_scalar("x", float(comm.rank), 1)
# one write of the whole line: the ranks share mpiexec's pipe, and print() writes each of
# its arguments apart, so two ranks' words could interleave
sys.stdout.write(f"{type(comm).__name__} {get_rank()} {get_world_size()} {buffer.tolist()}\\n")
sys.stdout.flush()
"""


@needs_mpi
def test_a_script_started_by_mpiexec_finds_its_world(tmp_path):
    from visualdl import LogReader

    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    env = {**os.environ, **LOCAL_ONLY, "PYTHONPATH": ROOT}
    for name in ("RANK", "WORLD_SIZE", "PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM"):
        env.pop(name, None)
    done = subprocess.run([launcher(), "-n", "2", sys.executable, str(script),
                           str(tmp_path / "run")], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    lines = sorted(line for line in out.splitlines() if line.startswith("MPICommunicator"))
    assert lines == ["MPICommunicator 0 2 [3.0, 3.0, 3.0]", "MPICommunicator 1 2 [3.0, 3.0, 3.0]"]
    reader = LogReader(str(tmp_path))
    assert reader.ranks("run") == [0, 1]  # the writers took their rank from MPI's launcher
    assert [reader.scalars("run", "x", rank=r).values[0] for r in (0, 1)] == [0.0, 1.0]


def test_spawn_refuses_an_unknown_backend():
    with pytest.raises(ValueError, match="backend must be one of auto, mpi, gloo, got 'nccl2'"):
        spawn(workers.train, nprocs=2, backend="nccl2")


def _endpoints(pid: int) -> list[str]:
    return sorted(n for n in os.listdir(SHM_DIR) if n.startswith(f"{pid}:{os.getuid()}:"))


def _segments() -> set[str]:
    return {n for n in os.listdir(SHM_DIR) if n.startswith(("mpich_shm_", "mpich_vci_"))}


@needs_mpi
@pytest.mark.skipif(not os.path.isdir(SHM_DIR), reason="no /dev/shm on this system")
def test_ranks_that_end_without_finalize_leave_no_shared_memory_behind(tmp_path):
    """libfabric removes a rank's 13 MB region only in MPI_Finalize; a rank that exited
    (and the peer ended after it) left theirs, and a later rank given the same PID failed in
    MPI_Init on the dead one's region; MPICH's job segment (named after the launcher's PID)
    was left too."""
    segments = _segments()
    with pytest.raises(DistributedError, match="^rank 1: worker exited with status 3"):
        spawn(workers.note_pid_then_exit, args=(str(tmp_path), 1), nprocs=2, backend="mpi",
              env={"VISUALDL_DIST_TIMEOUT": "10"}, timeout_s=120)
    pids = [int(name) for name in os.listdir(tmp_path)]
    assert len(pids) == 2
    assert [_endpoints(pid) for pid in pids] == [[], []]
    assert _segments() - segments == set()


@pytest.mark.skipif(not os.path.isdir(SHM_DIR), reason="no /dev/shm on this system")
def test_endpoints_of_a_dead_pid_are_cleared_and_a_live_ones_kept():
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    made = [os.path.join(SHM_DIR, f"{pid}:{os.getuid()}:{n}")
            for pid in (dead_pid, live.pid) for n in (0, 1)]
    longer = os.path.join(SHM_DIR, f"{dead_pid}0:{os.getuid()}:0")  # another PID's prefix
    try:
        for path in [*made, longer]:
            with open(path, "wb") as f:
                f.write(b"stale")
        assert sorted(clear_endpoints(dead_pid)) == made[:2]
        assert _endpoints(dead_pid) == []
        assert clear_endpoints(live.pid) == []
        assert _endpoints(live.pid) == [os.path.basename(p) for p in made[2:]]
        assert os.path.exists(longer)
    finally:
        live.kill()
        live.wait()
        for path in [*made, longer]:
            if os.path.exists(path):
                os.unlink(path)


@pytest.mark.skipif(not os.path.isdir(SHM_DIR), reason="no /dev/shm on this system")
def test_the_launcher_starts_only_once_what_a_dead_job_of_its_pid_left_is_gone(monkeypatch,
                                                                               tmp_path):
    """A dead job's segment under the launcher's PID is taken by the new job's ranks as
    already set up (they hang or fail in MPI_Init): the launcher is held until it is gone."""
    planted = []
    real = mpi_shm.clear_world

    def stale_then_clear(pid: int) -> list[str]:
        path = os.path.join(SHM_DIR, mpi_shm.world_segment(pid))
        with open(path, "wb") as f:
            f.write(b"stale")
        planted.append(path)
        time.sleep(0.3)  # a launcher that was not held has listed /dev/shm by now
        return real(pid)

    monkeypatch.setattr(mpi_launch, "clear_world", stale_then_clear)
    listing = tmp_path / "listing"
    proc = mpi_launch.start_launcher(["/bin/sh", "-c", f'ls {SHM_DIR} > "{listing}"'],
                                     dict(os.environ))
    proc.wait(30)
    try:
        [path] = planted
        assert listing.read_text().split() != []
        assert os.path.basename(path) not in listing.read_text().split()
    finally:
        for path in planted:
            if os.path.exists(path):
                os.unlink(path)
