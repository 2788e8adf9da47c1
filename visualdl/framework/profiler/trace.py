"""Turn a finished ``Recorder`` into a Chrome trace-event document (Kineto's conventions).

The document (see docs/profiler.md)::

    {"schemaVersion": 1, "displayTimeUnit": "ms", "baseTimeNanoseconds": <epoch ns at start>,
     "traceName": ..., "record_shapes": bool, "profile_memory": bool,
     "deviceProperties": [...GPUs...], "visualdl_env": {...},
     "traceEvents": [{"ph": "X", "cat", "name", "pid", "tid", "ts", "dur", "args"}, ...]}

``ts`` is microseconds since the recording started (float, ns precision), ``dur`` in
microseconds. Host events sit on ``pid`` = the process id, ``tid`` = the OS thread id; GPU
kernels on pid 0 ("GPU 0"), tid 0 ("stream 0"), as PyTorch puts device tracks apart.
"""

from __future__ import annotations

import os
import platform
import socket
import sys
from typing import Any

from .categories import BACKWARD, KERNEL, MEMCPY, MEMORY, OPERATOR, OPTIMIZER
from .recorder import Recorder

GPU_PID = 0
GPU_STREAM_TID = 0
_DEVICE_TYPE = {"cpu": 0, "cuda": 1}  # Kineto's "Device Type"
_DEVICE_ID = {"cpu": -1, "cuda": 0}
_KIND = {BACKWARD: "backward", OPTIMIZER: "optimizer", MEMCPY: "memcpy"}


def environment(rec: Recorder, devices: list[str]) -> dict[str, Any]:
    """What the run ran on: framework and library versions, device, threads, host."""
    import numba
    import numpy

    import visualdl

    from ..threads import get_num_threads

    env: dict[str, Any] = {
        "framework": "visualdl.framework",
        "framework_version": visualdl.__version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "device": "cuda" if "cuda" in devices else "cpu",
        "devices": devices,
        "num_threads": get_num_threads(),
        "numba_threads": numba.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "cpu": platform.processor() or platform.machine(),
        "os": platform.platform(),
        "hostname": socket.gethostname(),
        "pid": os.getpid(),
        "argv": " ".join(sys.argv[:4]),
    }
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        env["cuda_simulator"] = True
    return env


def device_properties() -> list[dict[str, Any]]:
    """Kineto's ``deviceProperties`` for the GPU, or [] without one."""
    from ..device import cuda_available

    if not cuda_available():
        return []
    try:
        from numba import cuda

        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        props: dict[str, Any] = {"id": 0, "name": name}
        cc = getattr(dev, "compute_capability", None)
        if cc:
            props["computeMajor"], props["computeMinor"] = int(cc[0]), int(cc[1])
        try:
            props["totalGlobalMem"] = int(cuda.current_context().get_memory_info()[1])
        except Exception:  # the simulator has no memory info
            pass
        sms = getattr(dev, "MULTIPROCESSOR_COUNT", None)
        if isinstance(sms, int):
            props["numSms"] = sms
        return [props]
    except Exception:  # a device that answers nothing still gets traced
        return []


def _op_args(args: tuple) -> dict[str, Any]:
    seq, device, shapes, forward, scope = args
    out: dict[str, Any] = {"Sequence number": seq, "Device": device}
    if forward is not None:
        out["Forward Op"] = forward
    if scope:
        out["Layer Scope"] = scope
    if shapes is not None:
        out["Input Dims"] = [list(s) if s is not None else [] for s in shapes]
    return out


def _kernel_events(rec: Recorder) -> list[dict[str, Any]]:
    """GPU spans from the CUDA event pairs, placed on the host clock through the event
    recorded at start. The CUDA simulator times nothing (its kernels run synchronously on
    the host), so there the host span stands in, marked ``"Timing": "host"``."""
    if not rec.kernels or rec.gpu_base is None:
        return []
    from numba import cuda

    cuda.synchronize()
    base, base_ns = rec.gpu_base
    out = []
    for name, cat, e0, e1, t0, t1, seq in rec.kernels:
        start_ms, dur_ms = base.elapsed_time(e0), e0.elapsed_time(e1)
        if start_ms < 0 or dur_ms < 0:  # the simulator's "meaningless" answer
            ts_ns, dur_ns, timing = t0 - rec.start_ns, t1 - t0, "host"
        else:
            ts_ns = base_ns - rec.start_ns + start_ms * 1e6
            dur_ns, timing = dur_ms * 1e6, "cuda_event"
        args = {"Op": name, "Kind": _KIND.get(cat, "forward"), "Sequence number": seq,
                "device": 0, "stream": 0, "Timing": timing}
        if type(seq) is dict:  # a memcpy: bytes and direction (HtoD, DtoH), as Kineto's
            args["Sequence number"] = None
            args["Bytes"], args["Direction"] = seq["Bytes"], seq["Direction"]
            if dur_ns > 0:
                args["memory bandwidth (GB/s)"] = round(seq["Bytes"] / dur_ns, 3)
        out.append({"ph": "X", "cat": MEMCPY if cat == MEMCPY else KERNEL, "name": name,
                    "pid": GPU_PID,
                    "tid": GPU_STREAM_TID, "ts": round(ts_ns / 1000, 3),
                    "dur": round(dur_ns / 1000, 3), "args": args})
    return out


def _main_tid(rec: Recorder) -> int:
    """The OS id of the thread that started recording."""
    return next(iter(rec.native_ids.values()), 0)


def build(rec: Recorder, *, steps: tuple[int, int] | None = None, worker: str = "",
          options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Chrome trace document of ``rec`` (which must be stopped)."""
    pid = os.getpid()
    base = rec.start_ns
    native = rec.native_ids

    def os_tid(ident: int) -> int:  # a thread gone before stop() keeps a 31-bit ident
        tid = native.get(ident)
        return tid if tid is not None else ident & 0x7FFFFFFF

    events: list[dict[str, Any]] = []
    tids: set[int] = set()
    devices: set[str] = set()
    append = events.append
    for cat, name, t0, t1, ident, args in rec.events:
        tid = os_tid(ident)
        ev: dict[str, Any] = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
                              "ts": round((t0 - base) / 1000, 3), "dur": round((t1 - t0) / 1000, 3)}
        if type(args) is tuple:
            ev["args"] = _op_args(args)
            devices.add(args[1])
        elif args:
            ev["args"] = args
        tids.add(tid)
        append(ev)
    for t, ident, device, nbytes, total, addr, op in rec.mem_events:
        tid = os_tid(ident)
        mev = {"ph": "i", "s": "t", "cat": MEMORY, "name": "[memory]", "pid": pid, "tid": tid,
               "ts": round((t - base) / 1000, 3),
               "args": {"Bytes": nbytes, "Total Allocated": total, "Total Reserved": total,
                        "Addr": addr, "Device Type": _DEVICE_TYPE.get(device, 0),
                        "Device Id": _DEVICE_ID.get(device, -1)}}
        if op is not None:
            mev["args"]["Op"] = op
        tids.add(tid)
        append(mev)
    kernels = _kernel_events(rec)
    events.extend(kernels)
    events.sort(key=lambda e: e["ts"])
    meta = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
             "args": {"name": f"visualdl.framework (pid {pid})"}}]
    for i, tid in enumerate(sorted(tids)):
        label = "main thread" if tid == _main_tid(rec) else f"thread {tid}"
        meta.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                     "args": {"name": label}})
        meta.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                     "args": {"sort_index": i}})
    if kernels:
        meta.append({"ph": "M", "name": "process_name", "pid": GPU_PID, "tid": 0,
                     "args": {"name": "GPU 0"}})
        meta.append({"ph": "M", "name": "thread_name", "pid": GPU_PID, "tid": GPU_STREAM_TID,
                     "args": {"name": "stream 0 (default)"}})
    dev_list = sorted(devices) or ["cpu"]
    env = environment(rec, dev_list)
    if steps is not None:
        env["steps"] = list(steps)
    if worker:
        env["worker"] = worker
    env.update(options or {})
    trace = {
        "schemaVersion": 1,
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": rec.start_epoch_ns,
        "traceName": worker or f"{socket.gethostname()}_{pid}",
        "record_shapes": rec.shapes,
        "profile_memory": rec.memory is not None,
        "deviceProperties": device_properties() if "cuda" in devices else [],
        "visualdl_env": env,
        "traceEvents": meta + events,
    }
    info = distributed_info()
    if info is not None:
        trace["distributedInfo"] = info
    return trace


def distributed_info() -> dict[str, Any] | None:
    """This process's rank, world size and backend when it trains data-parallel (kineto's
    ``distributedInfo``: the profiler's distributed view orders the ranks by it). Looked up
    only where the distributed code is loaded: the profiler never imports it."""
    env = sys.modules.get("visualdl.framework.distributed.env")
    return env.group_info() if env is not None else None


def is_op(ev: dict[str, Any]) -> bool:
    """An operator event (forward or backward op), as opposed to a span or phase."""
    return ev.get("cat") in (OPERATOR, BACKWARD) and "Sequence number" in (ev.get("args") or {})
