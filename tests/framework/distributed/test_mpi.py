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
from visualdl.framework.distributed.mpi_launch import LOCAL_ONLY, launcher

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
