"""Put a SimulatedLibrary where pynvml keeps its loaded libnvidia-ml, and take it away again."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rigcheck.testing.nvml_sim.library import SimulatedLibrary
from rigcheck.testing.nvml_sim.profiles import driver_profile, machine_driver, machine_profile


@contextmanager
def simulated_nvml(
    machine: str | dict[str, Any], driver: str | dict[str, Any] | None = None
) -> Iterator[SimulatedLibrary]:
    """pynvml with `machine` (a profile name or dict) behind it, as `driver` (a generation,
    R525...R580) exports it; by default the machine's own driver version.

    pynvml loads the library once (`nvmlLib`, checked for None in `_LoadNvmlLibrary`) and
    caches each function it looked up (`_nvmlGetFunctionPointer_cache`): both are set here and
    restored after, so no call reaches a real libnvidia-ml and no lookup outlives the profile.
    """
    import pynvml

    machine = machine_profile(machine) if isinstance(machine, str) else machine
    if driver is None:
        driver = machine_driver(machine)
    elif isinstance(driver, str):
        driver = driver_profile(driver)
    lib = SimulatedLibrary(machine, driver)
    saved_lib, saved_cache = pynvml.nvmlLib, dict(pynvml._nvmlGetFunctionPointer_cache)
    pynvml.nvmlLib = lib
    pynvml._nvmlGetFunctionPointer_cache.clear()
    try:
        yield lib
    finally:
        pynvml.nvmlLib = saved_lib
        pynvml._nvmlGetFunctionPointer_cache.clear()
        pynvml._nvmlGetFunctionPointer_cache.update(saved_cache)


def on_gpu(
    machine: str | dict[str, Any], read: Callable[[Any], Any], index: int = 0,
    driver: str | dict[str, Any] | None = None,
) -> Any:  # fmt: skip
    """read(handle) of GPU `index` through the real pynvml over the simulated library, between
    nvmlInit and nvmlShutdown; a simulator crash fails the caller after the read."""
    import pynvml

    with simulated_nvml(machine, driver) as lib:
        pynvml.nvmlInit()
        try:
            value = read(pynvml.nvmlDeviceGetHandleByIndex(index))
        finally:
            pynvml.nvmlShutdown()
        assert not lib.crashes, lib.crashes
        return value
