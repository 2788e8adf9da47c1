"""``vf.profiler``: where a training step's time goes (PaddlePaddle's ``paddle.profiler``
names and semantics).

    import visualdl.framework as vf
    from visualdl.framework import profiler

    with profiler.Profiler(scheduler=(10, 20),
                           on_trace_ready=profiler.export_chrome_tracing("./prof")) as prof:
        for batch in loader:
            ...
            prof.step()
    prof.summary()

Recorded: every op through the dispatcher (forward ops; backward ops as ``<op>_grad``),
optimizer steps, DataLoader batches, ``Model.fit``'s phases, Numba compilation, tensor
memory (``profile_memory``), GPU kernel time by CUDA events, and ``RecordEvent`` spans. The
output is a Chrome trace (Kineto's conventions) per worker; see docs/profiler.md.
"""

from .categories import CATEGORIES, TracerEventType
from .trace_handlers import export_chrome_tracing, export_visualdl
from .profiler import Profiler
from .record_event import RecordEvent
from .scheduler import ProfilerState, ProfilerTarget, make_scheduler
from .summary import SortedKeys, SummaryView

__all__ = [
    "Profiler", "ProfilerState", "ProfilerTarget", "make_scheduler", "RecordEvent",
    "export_chrome_tracing", "export_visualdl", "SortedKeys", "SummaryView",
    "TracerEventType", "CATEGORIES",
]
