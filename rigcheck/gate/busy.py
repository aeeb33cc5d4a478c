"""`--busy-node`: the quick tier on a node that runs other work (a Kubernetes DaemonSet beside
other pods, a shared Slurm node), judging only what other work cannot change or be hurt by.

Two kinds of quick-tier checks are not judged there, each reported as a skip whose reason starts
with NOT_JUDGED, never as a pass:
- idle-only readings: another pod's processes, memory, heat and power throttling are normal on
  a busy GPU, not a fault;
- anything that needs a CUDA context or a kernel (the smoke kernels, torch's device count): a
  health check must not take memory or time on GPUs that other work owns. So the run also hides
  every GPU from CUDA and HIP (`hide_gpus`) before the torch probe starts; NVML, sysfs and the
  kernel log, which the remaining checks read, do not depend on those variables.

The idle run (docs/k8s: a Job that holds every GPU of a free node) judges all of them.
"""

from __future__ import annotations

from collections.abc import MutableMapping

NOT_JUDGED = "NOT JUDGED on a busy node"
IDLE = "a reading that other work on the GPU changes"
KERNEL = "needs a CUDA context on GPUs that other work owns"

# Check node ids (parametrization left off) -> why a busy node cannot judge them.
BUSY_UNJUDGED = {
    "suites/facts/test_health.py::test_no_other_processes": IDLE + " (its processes)",
    "suites/facts/test_health.py::test_no_throttle_at_idle": IDLE + " (power/thermal limits)",
    "suites/facts/test_hidden_state.py::test_memory_in_use_is_listed": IDLE + " (its memory)",
    "suites/facts/test_idle_state.py::test_idle_temperature_below_slowdown": IDLE + " (heat)",
    "suites/facts/test_amd_idle.py::test_amd_idle_temperature_below_slowdown": IDLE + " (heat)",
    "suites/facts/test_amd_idle.py::test_amd_no_violation_at_idle": IDLE
    + " (power/thermal limits)",
    "suites/facts/test_precision.py::test_bf16_matmul_runs": KERNEL + " (smoke kernel)",
    "suites/facts/test_precision.py::test_fp8_matmul_runs": KERNEL + " (smoke kernel)",
    "suites/facts/test_software_stack.py::test_flash_attn_forward_runs": KERNEL + " (kernel)",
    "suites/facts/test_software_stack.py::test_torch_sees_all_devices": KERNEL + " (CUDA init)",
}
# CUDA_VISIBLE_DEVICES="": the CUDA runtime then lists no device, so the torch probe opens no
# context and runs no kernel. HIP_VISIBLE_DEVICES="" is meant to do the same under ROCm; no
# ROCm machine has run it (and the Kubernetes manifests are NVIDIA's).
HIDING = {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": ""}


def unjudged_reason(nodeid: str) -> str | None:
    """The skip reason for a check a busy node does not judge, or None to judge it."""
    base = nodeid.split("[", 1)[0]
    why = next((w for k, w in BUSY_UNJUDGED.items() if _names(base, k)), None)
    if why is None:
        return None
    return f"{NOT_JUDGED}: {why}; the idle run judges it (docs/gate.md, busy nodes)"


def not_judged(checks: list[dict]) -> int:
    """How many of a certificate's checks a busy node left NOT JUDGED (the terminal's count)."""
    return sum(
        1 for c in checks
        if c.get("outcome") == "skip" and str(c.get("message") or "").startswith(NOT_JUDGED)
    )  # fmt: skip


def hide_gpus(environ: MutableMapping[str, str]) -> None:
    environ.update(HIDING)


def _names(nodeid: str, key: str) -> bool:
    """Whether the node id is the check `key` names, wherever pytest's rootdir put the suites
    (`suites/facts/...` in a clone, a longer path to an installed copy)."""
    return nodeid == key or nodeid.endswith("/" + key)
