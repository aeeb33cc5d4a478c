"""The torch probe, run as its own process (`python -m rigcheck.facts.host.torch_probe`).

It runs apart from pytest so that a broken torch, a CUDA init that hangs, or a
flash-attn that segfaults costs one error record, never the session; and so the
pytest process holds no GPU context while the fact checks look for stray processes.
It prints one JSON object on stdout. Each smoke test is a tiny real kernel whose
result is recorded as a fact, so replaying a snapshot judges it too.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Callable
from typing import Any


def guarded(read: Callable[[], Any]) -> Any:
    try:
        return read()
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}".strip()}


def main(argv: list[str]) -> None:
    try:
        import torch
    except Exception as exc:  # torch missing or broken: that is the fact
        print(json.dumps({"torch": {"error": f"import torch failed: {exc}"}}))
        return
    if "--gate" in argv:  # torch_process.py: wait until the parent has read NVML at idle
        sys.stdin.readline()  # "" at end of file: the parent is gone or let go; go on
    facts = {"torch": probe_torch(torch), "flash_attn": probe_flash_attn()}
    facts["smoke"] = run_smoke_tests(torch, facts["flash_attn"])
    print(json.dumps(facts, default=str))


def probe_torch(torch) -> dict[str, Any]:
    cuda = torch.version.cuda
    hip = getattr(torch.version, "hip", None)
    return {
        "version": torch.__version__,
        "build": "rocm" if hip else "cuda" if cuda else "cpu",
        "cuda_version": cuda,
        "hip_version": hip,
        "cudnn_version": guarded(lambda: torch.backends.cudnn.version()),
        "nccl_version": guarded(lambda: _nccl_version(torch)),
        "cuda_available": guarded(torch.cuda.is_available),
        "device_count": guarded(torch.cuda.device_count),
        "arch_list": guarded(torch.cuda.get_arch_list) if cuda or hip else [],
        "bf16_supported": guarded(lambda: _bf16_supported(torch)),
        "tf32_matmul_allowed": torch.backends.cuda.matmul.allow_tf32,
        "tf32_cudnn_allowed": torch.backends.cudnn.allow_tf32,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "mps_built": torch.backends.mps.is_built(),
        # The vector ISA torch's CPU kernels dispatch to (ATEN_CPU_CAPABILITY can lower it) and
        # oneDNN's cap (ONEDNN_MAX_CPU_ISA): the cpu class judges bf16 only where both allow the
        # native instructions (rigcheck/measure/cpu_isa.py).
        "cpu_capability": guarded(lambda: torch.backends.cpu.get_cpu_capability()),
        "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA")
        or os.environ.get("DNNL_MAX_CPU_ISA"),
        "mps_available": torch.backends.mps.is_available(),
        "devices": guarded(lambda: _devices(torch)),
    }


def _nccl_version(torch) -> str | None:
    if not torch.cuda.is_available() or not torch.distributed.is_nccl_available():
        return None
    version = torch.cuda.nccl.version()
    return ".".join(map(str, version)) if isinstance(version, tuple) else str(version)


def _bf16_supported(torch) -> dict[str, bool] | None:
    """torch answers True on pre-Ampere GPUs through emulation unless asked for native only."""
    if not torch.cuda.is_available():
        return None
    try:
        native = torch.cuda.is_bf16_supported(including_emulation=False)
    except TypeError:  # torch before the keyword existed: native means Ampere or newer
        native = torch.cuda.get_device_capability() >= (8, 0)
    return {"with_emulation": torch.cuda.is_bf16_supported(), "native": native}


def _devices(torch) -> list[dict[str, Any]]:
    if not torch.cuda.is_available():
        return []
    out = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        out.append(
            {
                "index": i,
                "name": p.name,
                "compute_capability": f"{p.major}.{p.minor}",
                "total_memory_bytes": p.total_memory,
                "gcn_arch": getattr(p, "gcnArchName", None),
                "pci_bus_id": _bus_id(p),
                "multi_processor_count": p.multi_processor_count,
            }
        )
    return out


def _bus_id(props) -> str | None:
    if not hasattr(props, "pci_bus_id"):
        return None
    return f"{props.pci_domain_id:04x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"


def probe_flash_attn() -> dict[str, Any]:
    """Installed or not, its version, or the exact import error and what kind it is."""
    if importlib.util.find_spec("flash_attn") is None:
        return {"installed": False}
    try:
        import flash_attn

        return {"installed": True, "version": flash_attn.__version__, "import_error": None}
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        # An undefined symbol means it was built against another torch or CUDA: an ABI mismatch.
        kind = "abi_mismatch" if "undefined symbol" in message else "import_failed"
        return {"installed": True, "version": None, "import_error": message, "error_kind": kind}


def run_smoke_tests(torch, flash_attn: dict[str, Any]) -> dict[str, Any]:
    # The CPU smoke checks an answer, not speed: one thread, so no OpenMP pool is started that
    # spins on every core until the probe exits (about 0.1 s of CPU on a loaded host).
    torch.set_num_threads(1)
    smoke: dict[str, Any] = {"cpu_bf16_matmul": guarded(lambda: _bf16_matmul(torch, "cpu"))}
    if torch.cuda.is_available():
        n = torch.cuda.device_count()
        smoke["bf16_matmul"] = [
            guarded(lambda i=i: _bf16_matmul(torch, f"cuda:{i}")) for i in range(n)
        ]
        smoke["fp8_matmul"] = [guarded(lambda i=i: _fp8_matmul(torch, i)) for i in range(n)]
        if flash_attn.get("installed") and not flash_attn.get("import_error"):
            smoke["flash_attn_forward"] = guarded(lambda: _flash_attn_forward(torch))
    if torch.backends.mps.is_available():
        smoke["mps"] = _mps_checks(torch)
    return smoke


def _bf16_matmul(torch, device: str) -> dict[str, Any]:
    """A real bf16 matmul, checked against fp32: it ran, and the answer is right."""
    gen = torch.Generator(device="cpu").manual_seed(0)
    a = torch.randn(256, 256, generator=gen)
    b = torch.randn(256, 256, generator=gen)
    out = (a.to(device, torch.bfloat16) @ b.to(device, torch.bfloat16)).float().cpu()
    ref = a.bfloat16().float() @ b.bfloat16().float()
    rel = ((out - ref).abs().max() / ref.abs().max()).item()
    return {"ran": True, "max_rel_err": rel, "ok": rel < 2e-2}


def _fp8_matmul(torch, index: int) -> dict[str, Any] | None:
    """torch._scaled_mm in e4m3; only on devices that have fp8 tensor cores (CC >= 8.9)."""
    major, minor = torch.cuda.get_device_capability(index)
    if (major, minor) < (8, 9):
        return None
    return fp8_matmul_on(torch, f"cuda:{index}")


def e4m3_dtype(torch, dev) -> Any:
    """The e4m3 type the device's fp8 units take: float8_e4m3fnuz on MI300 (gfx94x, whose
    hardware fp8 is the FNUZ encoding: hipBLASLt refuses the OCP float8_e4m3fn there, so a
    smoke in e4m3fn failed on a healthy MI300X), the OCP float8_e4m3fn everywhere else
    (NVIDIA, and AMD from gfx950 on, which took up the OCP types). torch's own
    test/test_matmul_cuda.py uses float8_e4m3fnuz for _scaled_mm on ROCm (its e4m3_type);
    the gfx94 test is the one ROCm's fp8 benchmarks use."""
    device = torch.device(dev)
    if device.type == "cuda" and getattr(torch.version, "hip", None):
        arch = torch.cuda.get_device_properties(device).gcnArchName
        if "gfx94" in arch:
            return torch.float8_e4m3fnuz
    return torch.float8_e4m3fn


def fp8_matmul_on(torch, dev: str) -> dict[str, Any]:
    e4m3 = e4m3_dtype(torch, dev)
    a = torch.randn(64, 64, device=dev).to(e4m3)
    b = torch.randn(64, 64, device=dev).to(e4m3).t()  # column-major, as required
    one = torch.tensor(1.0, device=dev)
    out = torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    out = out[0] if isinstance(out, tuple) else out  # torch before 2.4 returns (out, amax)
    ref = a.float() @ b.float()
    rel = ((out.float() - ref).abs().max() / ref.abs().max()).item()
    return {"ran": True, "max_rel_err": rel, "ok": rel < 2e-2}


def _flash_attn_forward(torch) -> dict[str, Any]:
    """flash-attn's own kernel on a tiny input, compared with torch's math attention."""
    from flash_attn import flash_attn_func

    q, k, v = (torch.randn(1, 128, 4, 64, device="cuda", dtype=torch.float16) for _ in range(3))
    out = flash_attn_func(q, k, v)
    ref = torch.nn.functional.scaled_dot_product_attention(
        *(t.transpose(1, 2).float() for t in (q, k, v))
    ).transpose(1, 2)
    err = (out.float() - ref).abs().max().item()
    return {"ran": True, "max_abs_err": err, "ok": err < 1e-2}


def _mps_checks(torch) -> dict[str, Any]:
    return {
        "roundtrip": guarded(lambda: _mps_roundtrip(torch)),
        "float64": _mps_float64(torch),
        "autocast_fp16": guarded(lambda: _mps_autocast(torch)),
        "bf16_matmul": guarded(lambda: _bf16_matmul(torch, "mps")),  # MPS has bf16 on macOS 14+
    }


def _mps_roundtrip(torch) -> dict[str, Any]:
    x = torch.arange(1024, dtype=torch.float32)
    back = (x.to("mps") * 2).cpu()
    return {"ok": bool(torch.equal(back, x * 2))}


def _mps_float64(torch) -> dict[str, Any]:
    """MPS has no float64: torch should refuse it with an error, not compute something else."""
    try:
        t = torch.ones(4, dtype=torch.float64, device="mps")
        value = (t * 3).cpu()
        correct = value.dtype == torch.float64 and bool(torch.all(value == 3))
        return {"behaviour": "supported" if correct else "wrong_result", "dtype": str(value.dtype)}
    except (TypeError, RuntimeError) as exc:
        return {"behaviour": "rejected", "error": f"{type(exc).__name__}: {exc}"}


def _mps_autocast(torch) -> dict[str, Any]:
    layer = torch.nn.Linear(16, 16).to("mps")
    with torch.autocast("mps", dtype=torch.float16):
        out = layer(torch.randn(4, 16, device="mps"))
    return {"ok": out.dtype == torch.float16, "dtype": str(out.dtype)}


if __name__ == "__main__":
    main(sys.argv[1:])
    sys.stdout.flush()
