"""The ``cat`` of every event ``vf.profiler`` writes: the dashboard splits a step's time by
these names, so they are one shared contract (see docs/profiler.md).

Paddle's ``TracerEventType`` names map onto them (``TracerEventType.Optimization`` is
``OPTIMIZER``...), so code written for ``paddle.profiler.RecordEvent`` keeps working.
"""

from __future__ import annotations

import enum

PROFILE_STEP = "ProfileStep"  # ProfilerStep#N: one training step, from step() to step()
OPERATOR = "Operator"          # a forward op through the dispatcher
BACKWARD = "Backward"          # a backward op (name "<op>_grad"), and Model.fit's backward phase
OPTIMIZER = "Optimizer"        # Optimizer.step / zero_grad
DATALOADER = "Dataloader"      # DataLoader batches, Model.fit's next-batch
FORWARD = "Forward"            # Model.fit's forward (and eval) phase span
COMPILE = "Compile"            # Numba compiling a kernel (nested inside the op that needed it)
USER_DEFINED = "UserDefined"   # vf.profiler.RecordEvent
MEMORY = "Memory"              # "[memory]" instant events (ph "i"), with profile_memory
KERNEL = "Kernel"              # GPU time of an op, measured with CUDA events (device track)
MEMCPY = "Memcpy"              # host <-> device copies (device track)
RUNTIME = "Runtime"            # host-side CUDA runtime work (synchronisation)
COMMUNICATION = "Communication"  # a collective of data-parallel training (an all-reduce)

CATEGORIES = (PROFILE_STEP, OPERATOR, BACKWARD, OPTIMIZER, DATALOADER, FORWARD, COMPILE,
              USER_DEFINED, MEMORY, KERNEL, MEMCPY, RUNTIME, COMMUNICATION)


class TracerEventType(enum.Enum):
    """Paddle's event types, each with the category it is written as."""

    Operator = OPERATOR
    Dataloader = DATALOADER
    ProfileStep = PROFILE_STEP
    CudaRuntime = RUNTIME
    Kernel = KERNEL
    Memcpy = MEMCPY
    Memset = MEMCPY
    UserDefined = USER_DEFINED
    OperatorInner = OPERATOR
    Forward = FORWARD
    Backward = BACKWARD
    Optimization = OPTIMIZER
    PythonOp = OPERATOR
    PythonUserDefined = USER_DEFINED
    Compile = COMPILE
    Memory = MEMORY
    Communication = COMMUNICATION
