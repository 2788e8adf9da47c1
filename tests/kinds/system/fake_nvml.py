"""A test double of the pynvml functions the sampler calls (the GPU part only: the host
part is always tested against real psutil readings). Two GPUs with known readings; GPU 1
does not report power, as some boards do not."""

from __future__ import annotations

import types

NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_SM, NVML_CLOCK_MEM = 1, 2
GIB = 1 << 30


class NVMLError(Exception):
    pass


def module(broken_memory: bool = False) -> types.ModuleType:
    """A ``pynvml`` stand-in; ``broken_memory``: nvmlDeviceGetMemoryInfo answers something
    without ``used`` (a failure outside NVMLError, which the sampler must survive)."""
    state = {"shutdown": 0}
    m = types.ModuleType("pynvml")
    m.NVMLError = NVMLError
    m.NVML_TEMPERATURE_GPU, m.NVML_CLOCK_SM, m.NVML_CLOCK_MEM = 0, 1, 2
    m.state = state
    m.nvmlInit = lambda: None
    m.nvmlShutdown = lambda: state.__setitem__("shutdown", state["shutdown"] + 1)
    m.nvmlDeviceGetCount = lambda: 2
    m.nvmlDeviceGetHandleByIndex = lambda i: f"gpu{i}"
    m.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(
        gpu={"gpu0": 37, "gpu1": 99}[h], memory=5)

    def memory(h):
        if broken_memory:
            return object()
        return types.SimpleNamespace(used={"gpu0": 3 * GIB, "gpu1": 5 * GIB}[h],
                                     total=80 * GIB, free=0)

    def power(h):
        if h == "gpu1":
            raise NVMLError("Not Supported")
        return 123456  # milliwatts

    m.nvmlDeviceGetMemoryInfo = memory
    m.nvmlDeviceGetPowerUsage = power
    m.nvmlDeviceGetTemperature = lambda h, sensor: {"gpu0": 61, "gpu1": 70}[h]
    m.nvmlDeviceGetClockInfo = lambda h, which: {NVML_CLOCK_SM: 1980,
                                                  NVML_CLOCK_MEM: 2619}[which]
    return m
