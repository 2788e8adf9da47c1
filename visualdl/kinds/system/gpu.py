"""NVIDIA GPUs through NVML (the ``pynvml`` module of the ``nvidia-ml-py`` package):
utilisation, memory used and total, power, temperature and clocks of each GPU.

Without the package, or without a GPU or driver, ``open_gpus`` answers None and GPUs are
simply not sampled. A reading a GPU does not support (power on some boards) is left out
for that GPU.
"""

from __future__ import annotations

from typing import Any, Callable


def open_gpus() -> "GpuProbe | None":
    """The probe of every GPU NVML sees, or None (no pynvml, no driver, no GPU)."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # pynvml.NVMLError: no driver / library on this machine
        return None
    try:
        count = pynvml.nvmlDeviceGetCount()
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
    except Exception:
        handles = []
    if not handles:
        pynvml.nvmlShutdown()
        return None
    return GpuProbe(pynvml, handles)


class GpuProbe:
    """Readings of the GPUs: ``read()`` answers ``{"gpu<i>/<metric>": value}``."""

    def __init__(self, nvml: Any, handles: list) -> None:
        self._nvml = nvml
        self._handles = handles

    @property
    def count(self) -> int:
        return len(self._handles)

    def read(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for i, handle in enumerate(self._handles):
            for metric, value in self._readings(handle).items():
                if value is not None:
                    out[f"gpu{i}/{metric}"] = float(value)
        return out

    def _readings(self, handle: Any) -> dict[str, float | None]:
        nvml = self._nvml
        util = _maybe(lambda: nvml.nvmlDeviceGetUtilizationRates(handle))
        memory = _maybe(lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
        power = _maybe(lambda: nvml.nvmlDeviceGetPowerUsage(handle))  # milliwatts
        return {
            "utilization_percent": util.gpu if util is not None else None,
            "memory_used_bytes": memory.used if memory is not None else None,
            "memory_total_bytes": memory.total if memory is not None else None,
            "power_watts": power / 1000.0 if power is not None else None,
            "temperature_c": _maybe(lambda: nvml.nvmlDeviceGetTemperature(
                handle, nvml.NVML_TEMPERATURE_GPU)),
            "sm_clock_mhz": _maybe(lambda: nvml.nvmlDeviceGetClockInfo(
                handle, nvml.NVML_CLOCK_SM)),
            "memory_clock_mhz": _maybe(lambda: nvml.nvmlDeviceGetClockInfo(
                handle, nvml.NVML_CLOCK_MEM)),
        }

    def close(self) -> None:
        try:
            self._nvml.nvmlShutdown()
        except Exception:  # already shut down, or the driver went away: nothing to free
            pass


def _maybe(read: Callable[[], Any]) -> Any:
    """``read()``, or None when the GPU does not support it (an NVMLError)."""
    try:
        return read()
    except Exception:
        return None
