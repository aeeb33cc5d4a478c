"""Every measurement the perf suite makes: its spec key, how it is run, and where it applies.

Whether a measurement applies is decided by what the class's hardware has (no fp8 tensor
cores, no host link on unified memory), never by whether its spec has the figure: a figure
the spec lacks fails closed, it is not skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rigcheck.facts import Facts
from rigcheck.measure import attention, host_link, matmul, memory_bw, train_step
from rigcheck.measure.device import MeasuredDevice
from rigcheck.measure.measurement import Measurement
from rigcheck.measure.timing import Timer
from rigcheck.require import version_tuple
from rigcheck.spec import Spec

ACCELERATORS = ("cuda", "rocm")
Run = Callable[[MeasuredDevice, Timer, Spec], Measurement]
Rule = Callable[[Spec, Facts, MeasuredDevice], "str | None"]


@dataclass(frozen=True)
class Entry:
    key: str
    unit: str
    run: Run
    not_applicable: Rule  # the reason to skip on this class, or None


def half_precision(spec: Spec) -> str:
    """The class's training precision: bf16 where it is native, else fp16."""
    if spec.backend == "rocm" or (spec.backend == "cuda" and spec.expected_value("bf16_native")):
        return "bf16"
    return "fp16"


def _backends(*allowed: str, why: str = "") -> Rule:
    def rule(spec: Spec, facts: Facts, device: MeasuredDevice) -> str | None:
        if spec.backend in allowed:
            return None
        return f"only measured on {'/'.join(allowed)} classes; {spec.name} is {spec.backend}" + (
            f": {why}" if why else ""
        )

    return rule


def _tf32(spec: Spec, facts: Facts, device: MeasuredDevice) -> str | None:
    if spec.backend not in ACCELERATORS:
        return f"TF32 is a GPU tensor-core mode; {spec.name} is {spec.backend}"
    return _before_ampere(spec, device, "TF32 needs 8.0 (Ampere) or later")


def _fp16(spec: Spec, facts: Facts, device: MeasuredDevice) -> str | None:
    if spec.backend == "cpu":
        return (
            "fp16 matmul on a CPU runs a slow reference kernel, not a SIMD path: the cpu class "
            "is judged on fp32 and bf16"
        )
    return None


def _bf16(spec: Spec, facts: Facts, device: MeasuredDevice) -> str | None:
    if spec.backend == "mps":
        return "Apple GPUs have no bf16 matrix units: the Apple classes are judged on fp32 and fp16"
    if spec.backend == "cuda" and not spec.expected_value("bf16_native"):
        return f"{spec.title} has no native bf16 (it runs emulated): judged on fp16 instead"
    return None


def _fp8(spec: Spec, facts: Facts, device: MeasuredDevice) -> str | None:
    if spec.backend not in ACCELERATORS or not spec.expected_value("fp8"):
        return f"{spec.title} has no fp8 tensor cores"
    return None


def _flash_attn(spec: Spec, facts: Facts, device: MeasuredDevice) -> str | None:
    if spec.backend != "cuda":
        return f"flash-attn's kernel is measured on CUDA classes; {spec.name} is {spec.backend}"
    if not spec.expected_value("flash_attn"):
        return f"{spec.title} does not run flash-attn 2 (it needs compute capability 8.0+)"
    info = facts.find("software.flash_attn", {})
    if not isinstance(info, dict) or not info.get("installed") or info.get("import_error"):
        return (
            "flash-attn is not installed or does not import here "
            "(suites/facts/test_software_stack.py judges whether it should be)"
        )
    return None


def _sdpa_flash(spec: Spec, facts: Facts, device: MeasuredDevice) -> str | None:
    if spec.backend not in ACCELERATORS:
        return f"attention is measured on CUDA/ROCm classes; {spec.name} is {spec.backend}"
    return _before_ampere(spec, device, "SDPA's flash backend needs 8.0")


def _before_ampere(spec: Spec, device: MeasuredDevice, why: str) -> str | None:
    """Why an NVIDIA device older than compute capability 8.0 cannot run it; else None."""
    cc = device.fact.get("compute_capability")
    if spec.backend == "cuda" and isinstance(cc, str) and version_tuple(cc) < (8, 0):
        return f"{device.label} is compute capability {cc}: {why}"
    return None


def _matmul(precision: str, rule: Rule) -> Entry:
    return Entry(
        key=f"matmul_{precision}_tflops",
        unit="TFLOP/s",
        run=lambda device, timer, spec: matmul.matmul_tflops(device, timer, precision),
        not_applicable=rule,
    )


def _always(spec: Spec, facts: Facts, device: MeasuredDevice) -> str | None:
    return None


_HOST_LINK = _backends(*ACCELERATORS, why="no separate host link to measure")
ENTRIES = [
    _matmul("fp32", _always),
    _matmul("tf32", _tf32),
    _matmul("fp16", _fp16),
    _matmul("bf16", _bf16),
    _matmul("fp8", _fp8),
    Entry("device_copy_gbps", "GB/s", lambda d, t, s: memory_bw.device_copy_gbps(d, t), _always),
    Entry("device_triad_gbps", "GB/s", lambda d, t, s: memory_bw.device_triad_gbps(d, t), _always),
    Entry("h2d_pinned_gbps", "GB/s", lambda d, t, s: host_link.h2d_pinned_gbps(d, t), _HOST_LINK),
    Entry("d2h_pinned_gbps", "GB/s", lambda d, t, s: host_link.d2h_pinned_gbps(d, t), _HOST_LINK),
    Entry(
        "attention_sdpa_tflops",
        "TFLOP/s",
        lambda d, t, s: attention.attention_sdpa_tflops(d, t, half_precision(s)),
        _sdpa_flash,
    ),
    Entry(
        "attention_flash_attn_tflops",
        "TFLOP/s",
        lambda d, t, s: attention.attention_flash_attn_tflops(d, t, half_precision(s)),
        _flash_attn,
    ),
    Entry(
        "train_step_tokens_per_s",
        "tokens/s",
        lambda d, t, s: train_step.train_step_tokens_per_s(d, t, half_precision(s)),
        _backends(*ACCELERATORS, why="a training step is judged where models are trained"),
    ),
]
CATALOGUE = {entry.key: entry for entry in ENTRIES}
