"""The SM clock's ceilings as NVML states them (nvmlDeviceGetClock with a clock id).

NVML_CLOCK_ID_CUSTOMER_BOOST_MAX is the highest clock the board's configuration lets the GPU
boost to; on a datacenter board it equals the maximum clock (`nvidia-smi -q -d CLOCK`: "Max
Customer Boost Clocks" beside "Max Clocks", 1980 MHz on an H100 SXM, 1410 MHz on an A100), and
an OEM or provider who lowered it makes every kernel slower. GeForce boards answer Not
Supported. The applications-clock target and default are read here too (the `nvidia-smi -ac`
setting through the newer call). NVML has no call that reads the range `nvidia-smi -lgc`
locks the clocks to, and at idle the clocks are low anyway: locked clocks show under load
(the burn-in's clock floor), not here.
"""

from __future__ import annotations

CLOCK_IDS = {  # stored name -> NVML's clock id (nvmlClockId_t)
    "sm_app_target_mhz": "NVML_CLOCK_ID_APP_CLOCK_TARGET",
    "sm_app_default_mhz": "NVML_CLOCK_ID_APP_CLOCK_DEFAULT",
    "sm_customer_boost_max_mhz": "NVML_CLOCK_ID_CUSTOMER_BOOST_MAX",
}


def clock_limits(nvml, h) -> dict[str, int | None] | None:
    """Each id's SM clock in MHz; None where the board does not support that id, and None for
    the whole when it supports none (GeForce). Any other NVML error (No Permission in a vGPU
    guest) is raised for nvml.read to record."""
    limits: dict[str, int | None] = {}
    for key, const in CLOCK_IDS.items():
        try:
            limits[key] = nvml.nvmlDeviceGetClock(h, nvml.NVML_CLOCK_SM, getattr(nvml, const))
        except nvml.NVMLError_NotSupported:
            limits[key] = None
    return limits if any(value is not None for value in limits.values()) else None


# What each clock event reason (nvml.THROTTLE_REASONS' names) means when the GPU is idle, and
# what undoes it; NVML's nvmlClocksEventReason* documentation gives the meanings.
IDLE_REASON_ADVICE = {
    "applications_clocks_setting": "clocks held by an applications-clock or locked-clock "
    "setting: undo with `nvidia-smi -rac` and `nvidia-smi -rgc` (root)",
    "sw_power_cap": "the power limit holds the clocks even at idle: `nvidia-smi -q -d POWER` "
    "shows who lowered it; restore the default with `nvidia-smi -pl` or ask the provider",
    "hw_slowdown": "the board's HW slowdown is asserted (a power-brake or thermal fault): "
    "reset the GPU (`nvidia-smi -r`) or reboot; if it stays, drain the node and ask the "
    "provider",
    "sw_thermal_slowdown": "the driver slows the GPU for heat at idle: check fans, airflow and "
    "the inlet temperature, or ask the provider",
    "hw_thermal_slowdown": "the GPU's own thermal protection is slowing it at idle: a cooling "
    "fault; drain the node and ask the provider",
    "hw_power_brake_slowdown": "the external power brake is asserted (power supply or "
    "baseboard): drain the node and ask the provider",
    "sync_boost": "held to the clocks of its sync-boost group: remove the group "
    "(`nvidia-smi` sync boost settings) or ask the provider",
    "display_clock_setting": "held by the display clock setting: a display is attached to a "
    "compute GPU",
    # NVML documents these two only as "Board limit." and "Reliability.": no cause, no remedy.
    "board_limit": "NVML reports a board limit (NVIDIA documents no cause): see `nvidia-smi -q "
    "-d PERFORMANCE`, reset the GPU (`nvidia-smi -r`) or ask the provider",
    "reliability": "NVML reports a reliability limit (NVIDIA documents no cause): see "
    "`nvidia-smi -q -d PERFORMANCE`, reset the GPU (`nvidia-smi -r`) or ask the provider",
}


def idle_reason_advice(reason: str) -> str:
    return IDLE_REASON_ADVICE.get(reason, "an unknown reason: `nvidia-smi -q -d PERFORMANCE`")
