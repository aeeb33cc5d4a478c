"""Is the perf suite's measurement trustworthy on this device? Prints the fidelity ratios.

    python -m rigcheck.measure.fidelity [--runs 5] [--no-suite] [--json FILE]

- matmul: the suite's figure against the best a dedicated shape sweep finds (target >= 97%);
- copy: the suite's figure against the best plain torch copy over buffer sizes (>= 97%);
- repeatability: the coefficient of variation of every suite figure over --runs runs (< 2%);
- time to verdict: the wall time of the perf suite, run as a user runs it (`pytest -m perf`).

It measures the first CUDA/ROCm GPU, else the Apple GPU, else the CPU. Numbers measured on a
CPU say nothing about a GPU's: run it on the GPU whose class you calibrate.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rigcheck.measure import host_link, matmul, memory_bw
from rigcheck.measure.device import MeasuredDevice
from rigcheck.measure.measurement import coefficient_of_variation, rates
from rigcheck.measure.timing import Plan, Timer, random_floats

TARGET_RATIO, TARGET_CV, TARGET_SUITE_S = 0.97, 0.02, 60.0
SWEEP_PLAN = {"cpu": Plan(rounds=3, warmup_rounds=1, round_s=0.1)}
GPU_SWEEP_PLAN = Plan(rounds=5, warmup_rounds=2, round_s=0.02)
MIB = 2**20


def sweep_shapes(backend: str) -> list[tuple[int, int, int]]:
    """A dedicated sweep, wider than the suite's few shapes (mamf-finder style, coarser)."""
    if backend == "cpu":
        return [(s, s, s) for s in range(256, 2049, 256)]
    if backend == "mps":
        return [(s, s, s) for s in range(1024, 8193, 1024)]
    squares = [(s, s, s) for s in range(2048, 16385, 1024)]
    return squares + [(m, m, k) for m in (8192, 12288, 16384) for k in (2048, 4096, 12288)]


def copy_sizes(backend: str) -> list[int]:
    if backend == "cpu":
        return [64 * MIB, 128 * MIB, 256 * MIB, 512 * MIB]
    return [256 * MIB, 512 * MIB, 1024 * MIB, 2048 * MIB, 4096 * MIB]


def this_device() -> MeasuredDevice:
    import torch

    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        backend = "rocm" if torch.version.hip else "cuda"
        vendor = "amd" if torch.version.hip else "nvidia"
        fact = {"vendor": vendor, "name": props.name}
        return MeasuredDevice("0", f"cuda:0 ({props.name})", backend, 0, None, fact)
    if torch.backends.mps.is_available():
        return MeasuredDevice("mps", "Apple GPU (mps)", "mps")
    return MeasuredDevice("cpu", "cpu", "cpu")


def suite_figures(device: MeasuredDevice, precisions: list[str]) -> dict[str, Any]:
    """One run of every suite figure this device has (the same functions the suite calls)."""
    timer = Timer(_torch_device(device))
    figures = {}
    for precision in precisions:
        figures[f"matmul_{precision}_tflops"] = matmul.matmul_tflops(device, timer, precision)
    figures["device_copy_gbps"] = memory_bw.device_copy_gbps(device, timer)
    figures["device_triad_gbps"] = memory_bw.device_triad_gbps(device, timer)
    if device.backend in ("cuda", "rocm"):
        figures["h2d_pinned_gbps"] = host_link.h2d_pinned_gbps(device, timer)
        figures["d2h_pinned_gbps"] = host_link.d2h_pinned_gbps(device, timer)
    return figures


def best_sweep_tflops(device: MeasuredDevice, timer: Timer, precision: str) -> tuple[float, str]:
    """The best median TFLOP/s over the dedicated sweep, and its shape."""
    plan = SWEEP_PLAN.get(device.backend, GPU_SWEEP_PLAN)
    best, best_shape = 0.0, ""
    with matmul.float32_mode(precision):
        for shape in sweep_shapes(device.backend):
            ops = matmul.operands(precision, shape, timer.device)
            value = rates(matmul.tflop(shape), timer.time(ops.call, plan).per_call_s)[0]
            if value > best:
                best, best_shape = value, "x".join(map(str, shape))
            del ops
    return best, best_shape


def best_plain_copy_gbps(device: MeasuredDevice, timer: Timer) -> tuple[float, str]:
    """The best median GB/s of the same SM-kernel copy (memory_bw.scale_copy) over buffer sizes,
    and its size: whether the suite's one fixed size undersells the copy."""
    plan = memory_bw.PLANS.get(device.backend, memory_bw.GPU_PLAN)
    found = {nbytes: plain_copy_gbps(timer, plan, nbytes) for nbytes in copy_sizes(device.backend)}
    nbytes = max(found, key=found.get)
    return found[nbytes], f"{nbytes // MIB} MiB"


def plain_copy_gbps(timer: Timer, plan: Plan, nbytes: int) -> float:
    import torch

    src = random_floats(nbytes // 4, timer.device)
    dst = torch.empty_like(src)
    copy = lambda: memory_bw.scale_copy(src, dst)  # noqa: E731
    return rates(2 * nbytes / 1e9, timer.time(copy, plan).per_call_s)[0]


def applicable_precisions(device: MeasuredDevice) -> list[str]:
    import torch

    if device.backend == "cpu":
        return ["fp32", "bf16"]
    if device.backend == "mps":
        return ["fp32", "fp16"]
    precisions = ["fp32", "tf32", "fp16", "bf16"]
    if device.backend == "rocm" or torch.cuda.get_device_capability(0) >= (8, 9):
        precisions.append("fp8")
    return precisions


def swept_precisions(device: MeasuredDevice, precisions: list[str]) -> list[str]:
    """The precisions whose matmul figure is checked against a dedicated sweep."""
    if device.backend in ("cpu", "mps"):
        return precisions
    return [p for p in ("bf16", "fp8") if p in precisions]


def suite_wall_time() -> tuple[float, int]:
    """`pytest -m perf` from the checkout, as a user runs it: (seconds, exit code)."""
    root = Path(__file__).resolve().parents[2]
    argv = [sys.executable, "-m", "pytest", "-m", "perf", "-q", "-p", "no:cacheprovider"]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=1800)
    return time.perf_counter() - started, done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rigcheck.measure.fidelity", description=__doc__
    )
    parser.add_argument("--runs", type=int, default=5, help="runs of each suite figure (CV)")
    parser.add_argument("--no-suite", action="store_true", help="skip timing the perf suite")
    parser.add_argument("--json", metavar="FILE", help="also write every number to FILE")
    args = parser.parse_args(argv)

    import torch

    device = this_device()
    precisions = applicable_precisions(device)
    print(f"rigcheck fidelity on {device.label}, torch {torch.__version__}")
    if device.backend == "cpu":
        print("(measured on a CPU: these numbers say nothing about any GPU)")
    runs = [suite_figures(device, precisions) for _ in range(args.runs)]
    report: dict[str, Any] = {"device": device.label, "torch": torch.__version__, "figures": {}}
    print(f"\n{'figure':<22} {'median of ' + str(args.runs):>14} {'CV':>7}  (target < 2%)")
    for key in runs[0]:
        values = [run[key].value for run in runs]
        cv = coefficient_of_variation(values)
        unit = runs[0][key].unit
        report["figures"][key] = {"unit": unit, "values": values, "cv": cv}
        flag = "ok" if cv < TARGET_CV else "OVER"
        print(f"{key:<22} {statistics.median(values):>10.4g} {unit:<8} {cv:>6.2%}  {flag}")

    timer = Timer(_torch_device(device))
    print(f"\n{'fidelity':<52} {'suite':>10} {'best':>10} {'ratio':>7}  (target >= 97%)")
    for precision in swept_precisions(device, precisions):
        key = f"matmul_{precision}_tflops"
        suite = statistics.median(run[key].value for run in runs)
        best, shape = best_sweep_tflops(device, timer, precision)
        _ratio_line(report, f"{key} vs sweep (best {shape})", suite, best)
    suite = statistics.median(run["device_copy_gbps"].value for run in runs)
    best, size = best_plain_copy_gbps(device, timer)
    _ratio_line(report, f"device_copy_gbps vs size sweep (best {size})", suite, best)

    if not args.no_suite:
        seconds, code = suite_wall_time()
        report["suite_wall_s"], report["suite_exit_code"] = seconds, code
        flag = "ok" if seconds < TARGET_SUITE_S else "OVER"
        print(f"\npytest -m perf: {seconds:.1f} s wall, exit code {code} (target < 60 s) {flag}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


def _torch_device(device: MeasuredDevice):
    import torch

    return torch.device("cuda", 0) if device.index is not None else torch.device(device.backend)


def _ratio_line(report: dict[str, Any], name: str, suite: float, best: float) -> None:
    ratio = suite / best
    report.setdefault("fidelity", {})[name] = {"suite": suite, "best": best, "ratio": ratio}
    flag = "ok" if ratio >= TARGET_RATIO else "UNDER"
    print(f"{name:<52} {suite:>10.4g} {best:>10.4g} {ratio:>7.1%}  {flag}")


if __name__ == "__main__":
    sys.exit(main())
