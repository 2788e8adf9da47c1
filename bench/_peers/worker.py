"""One measurement of one system on one workload, in a fresh interpreter.

``bench/write_read.py`` runs this file once per (system, workload, phase, repeat), with
the interpreter of the system under test: ours in the caller's interpreter, VisualDL
2.5.3, tensorboardX 2.6 and TensorBoard each in a venv of their own. It must therefore
import nothing from the repository and only the standard library at top level: PyPI's
``visualdl`` has our import name, and the peers run with ``python -I`` from a folder
outside the repository so that ours can never shadow theirs.

Usage: ``worker.py SYSTEM PHASE WORKLOAD LOGDIR SIZES_JSON``; the result is one line
``BENCH-RESULT {json}`` on stdout (libraries may print other lines around it).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import zlib
from typing import Any, Callable

SEED = 20240601
RESULT_PREFIX = "BENCH-RESULT "


# -- the same input for every system, generated outside the timed region --------------
def scalar_values(count: int) -> list[float]:
    """Python floats, as a training loop hands them over (``loss.item()``)."""
    import numpy as np

    return np.random.default_rng(SEED).random(count).tolist()


def histogram_inputs(count: int, size: int) -> list[Any]:
    """``count`` distinct float32 arrays, so that no writer can profit from repeats."""
    import numpy as np

    rng = np.random.default_rng(SEED + 1)
    return list(rng.standard_normal((count, size), dtype=np.float32))


def image_inputs(count: int) -> list[Any]:
    """64x64x3 uint8 HWC images (noise: the worst case for PNG, the same for all)."""
    import numpy as np

    rng = np.random.default_rng(SEED + 2)
    return list(rng.integers(0, 256, size=(count, 64, 64, 3), dtype=np.uint8))


def digest(arrays: list[Any]) -> str:
    """A checksum of the first input, so the parent can prove all systems got the same."""
    first = arrays[0]
    data = first.tobytes() if hasattr(first, "tobytes") else repr(arrays[:100]).encode()
    return f"{zlib.crc32(data):08x}"


# -- writers: ours and VisualDL 2.5.3 share the API; tensorboardX differs a little -----
def open_writer(system: str, logdir: str) -> Any:
    if system == "tensorboardx":
        from tensorboardX import SummaryWriter

        return SummaryWriter(logdir)
    from visualdl import LogWriter  # ours or VisualDL 2.5.3, depending on the interpreter

    return LogWriter(logdir=logdir)


def library_info(system: str) -> dict[str, str]:
    """Which package actually ran: the parent checks it is the one we meant."""
    if system == "tensorboardx":
        import tensorboardX as module
    elif system == "tbparse":
        import tbparse as module
    elif system == "tensorboard":
        import tensorboard as module
    else:
        import visualdl as module
    return {"version": getattr(module, "__version__", "?"), "module_file": module.__file__}


def write_scalars(system: str, logdir: str, sizes: dict) -> dict:
    """W1: tags x steps add_scalar calls, step-major like a training loop."""
    tags = [f"w1/tag{i}" for i in range(sizes["w1_tags"])]
    steps = sizes["w1_steps"]
    values = scalar_values(len(tags) * steps)
    t0 = time.perf_counter()
    writer = open_writer(system, logdir)
    add = writer.add_scalar
    t_loop = time.perf_counter()
    i = 0
    for step in range(steps):
        for tag in tags:
            add(tag, values[i], step)
            i += 1
    t_calls = time.perf_counter()
    writer.close()
    t_end = time.perf_counter()
    # Per-call timers would cost as much as a call here; the loop time is the caller cost.
    return {"calls": i, "wall_s": t_end - t0, "caller_s": t_calls - t_loop,
            "digest": digest(values)}


def write_items(system: str, logdir: str, sizes: dict, workload: str) -> dict:
    """W2 (histograms) and W3 (images): the caller's time is summed over the calls only."""
    if workload == "W2":
        inputs = histogram_inputs(sizes["w2_calls"], sizes["w2_values"])
        method, tag, kwargs = "add_histogram", "w2/hist", {}
    else:
        inputs = image_inputs(sizes["w3_calls"])
        method, tag, kwargs = "add_image", "w3/image", {"dataformats": "HWC"}
    clock = time.perf_counter
    t0 = clock()
    writer = open_writer(system, logdir)
    add: Callable = getattr(writer, method)
    caller = 0.0
    for step, array in enumerate(inputs):
        t = clock()
        add(tag, array, step, **kwargs)
        caller += clock() - t
    writer.close()
    t_end = clock()
    return {"calls": len(inputs), "wall_s": t_end - t0, "caller_s": caller,
            "digest": digest(inputs)}


# -- readers: each system's own way of getting every scalar point back ---------------
def read_ours(logdir: str) -> int:
    from visualdl import LogReader

    reader = LogReader(logdir)
    points = 0
    for run in reader.runs():
        for tag in reader.tags(run).get("scalar", []):
            steps, _wall_times, _values = reader.scalars(run, tag)  # numpy arrays
            points += len(steps)
    return points


def read_visualdl(logdir: str) -> int:
    """VisualDL 2.5.3: ``LogReader(file_path=...)`` reads every record of one file
    without sampling (the ``logdir=`` form feeds the server's sampling data manager).
    ``parsing_from_proto`` is VisualDL's own conversion of its protos into
    ``[step, tag, timestamp, value]`` rows, the step its server takes too."""
    from visualdl import LogReader

    points = 0
    for name in sorted(os.listdir(logdir)):
        if "vdlrecords" not in name:
            continue
        reader = LogReader(file_path=os.path.join(logdir, name))
        for tag in reader.get_tags().get("scalar", []):
            rows = reader.parsing_from_proto("scalar", reader.get_data("scalar", tag))
            points += len(rows)
    return points


def read_tensorboard(logdir: str) -> int:
    """TensorBoard's ``EventAccumulator`` with every size guidance 0, i.e. keep all."""
    from tensorboard.backend.event_processing import event_accumulator as ea

    guidance = {kind: 0 for kind in ea.DEFAULT_SIZE_GUIDANCE}
    accumulator = ea.EventAccumulator(logdir, size_guidance=guidance)
    accumulator.Reload()
    return sum(len(accumulator.Scalars(tag)) for tag in accumulator.Tags()["scalars"])


def read_tbparse(logdir: str) -> int:
    """tbparse: every scalar as rows of a pandas DataFrame (it keeps everything)."""
    from tbparse import SummaryReader

    return len(SummaryReader(logdir, pivot=False).scalars)


READERS: dict[str, Callable[[str], int]] = {
    "ours": read_ours, "visualdl": read_visualdl, "tensorboard": read_tensorboard,
    "tbparse": read_tbparse,
}


def read_scalars(system: str, logdir: str) -> dict:
    """Time only the reading; the import is outside the timed region but inside RSS."""
    reader = READERS[system]
    if system == "tensorboard":
        from tensorboard.backend.event_processing import event_accumulator  # noqa: F401
    elif system == "tbparse":
        import tbparse  # noqa: F401
    else:
        import visualdl

        # Ours exports LogReader lazily (PEP 562): touching it imports the reader here,
        # outside the timed region, as the peers' eager imports do.
        visualdl.LogReader  # noqa: B018
    t0 = time.perf_counter()
    points = reader(logdir)
    return {"points": points, "wall_s": time.perf_counter() - t0}


def main(argv: list[str]) -> None:
    system, phase, workload, logdir, sizes_json = argv
    sizes = json.loads(sizes_json)
    if phase == "read":
        result = read_scalars(system, logdir)
    elif workload == "W1":
        result = write_scalars(system, logdir, sizes)
    else:
        result = write_items(system, logdir, sizes, workload)
    result.update(library_info(system))
    # Linux reports ru_maxrss in KiB: the process's peak resident set, imports included.
    result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(RESULT_PREFIX + json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
