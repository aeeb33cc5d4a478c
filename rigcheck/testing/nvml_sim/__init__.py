"""libnvidia-ml simulated below the real pynvml (nvidia-ml-py): see library.py and README.md.

with simulated_nvml("h100_hgx", "R580") as lib:
    rigcheck.facts.nvidia.nvml.probe_nvidia()   # every call goes through pynvml's own wrappers
"""

from rigcheck.testing.nvml_sim import links  # noqa: F401 (registers NVLink, fabric, topology)
from rigcheck.testing.nvml_sim.install import on_gpu, simulated_nvml
from rigcheck.testing.nvml_sim.profiles import DRIVERS, MACHINES, driver_profile, machine_profile

__all__ = ["DRIVERS", "MACHINES", "driver_profile", "machine_profile", "on_gpu", "simulated_nvml"]
