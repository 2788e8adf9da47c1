"""What MPICH and libfabric leave in ``/dev/shm`` when ranks end without ``MPI_Finalize``.

Both name their shared memory after PIDs and remove it only in ``MPI_Finalize``:

- libfabric's ``shm`` provider: each rank's 13 MB region ``<pid>:<uid>:<n>``;
- MPICH: the job's segments ``mpich_shm_<world>_<node>`` and ``mpich_vci_<world>_<node>``,
  where ``<world>`` is the FNV-1a hash of the launcher's key-value space, ``kvs_<pid>_0``
  for gforker.

A rank that aborted, exited or was killed leaves them behind, and PIDs wrap (at 32,768 on
many hosts). A later job whose launcher or rank gets a dead one's PID opens the stale memory,
whose header says it is ready before the new owner set it up: ``MPI_Init`` then fails with
"Message truncated", a SIGSEGV, or waits forever. So what a PID left is cleared before a
process of that PID starts MPI, and after the job.
"""

from __future__ import annotations

import contextlib
import os

#: where both keep their shared memory (POSIX shm_open on Linux)
SHM_DIR = "/dev/shm"


def clear_endpoints(pid: int) -> list[str]:
    """Remove libfabric's regions named after ``pid`` unless that process still runs (or is
    this one, about to start MPI); the paths removed. Only this user's: the name holds the
    uid."""
    if pid != os.getpid() and _alive(pid):
        return []
    return _remove(f"{pid}:{os.getuid()}:")


def clear_world(launcher_pid: int) -> list[str]:
    """Remove MPICH's segments of the job a gforker of PID ``launcher_pid`` runs: before it
    starts its ranks (held, see ``mpi_launch``), or once it ended; the paths removed."""
    world = _world(launcher_pid)
    return _remove(f"mpich_shm_{world}_", f"mpich_vci_{world}_")


def world_segment(launcher_pid: int, node: int = 0) -> str:
    """The name of MPICH's shared memory for the job a gforker of that PID runs."""
    return f"mpich_shm_{_world(launcher_pid)}_{node}"


def _world(launcher_pid: int) -> str:
    return f"{_fnv1a(f'kvs_{launcher_pid}_0'.encode()):x}"


def _remove(*prefixes: str) -> list[str]:
    try:
        names = [n for n in os.listdir(SHM_DIR) if n.startswith(prefixes)]
    except OSError:  # no /dev/shm here: nothing was left there either
        return []
    removed = []
    for name in names:
        with contextlib.suppress(OSError):  # another user's, or gone meanwhile
            os.unlink(os.path.join(SHM_DIR, name))
            removed.append(os.path.join(SHM_DIR, name))
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: its regions do not hold our uid
        return False
    return True


def _fnv1a(data: bytes) -> int:
    """32-bit FNV-1a, MPICH's ``HASH_FNV`` of the key-value space's name."""
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h
