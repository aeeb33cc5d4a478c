"""Whether this CPU computes bf16 natively: the cpu class judges its bf16 figure only there.

torch's CPU bf16 matmul goes to oneDNN, which has a bf16 kernel only on CPUs with AVX512_BF16
or AMX (x86) or the Armv8.6 BF16 extension (arm64). Elsewhere it converts to fp32 and runs a
reference path about 40x slower than the fp32 matmul (this project's 2-core AVX2 EPYC VM:
0.0005 TFLOP/s bf16 against 0.02 fp32, torch 2.13, 2026-11-29): a healthy CPU, not a broken
one. The decision is read from facts, never from a rate:

- host.cpu.simd_flags (py-cpuinfo): avx512_bf16, amx_bf16 or arm's bf16;
- software.torch.cpu_capability (torch.backends.cpu.get_cpu_capability()): the ISA torch's own
  kernels dispatch to; ATEN_CPU_CAPABILITY=avx2 lowers it to AVX2;
- software.torch.onednn_max_cpu_isa (ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA): oneDNN's cap; AVX2
  or an AVX-512 level below avx512_core_bf16 takes the bf16 kernels away.
"""

from __future__ import annotations

from rigcheck.facts import Facts

X86_BF16_FLAGS = ("avx512_bf16", "amx_bf16")
ARM_BF16_FLAG = "bf16"
# oneDNN ISA caps (its cpu_isa_t names, lower case) under which no bf16 kernel is left.
ONEDNN_BELOW_BF16 = frozenset(
    {"sse41", "avx", "avx2", "avx2_vnni", "avx2_vnni_2", "avx512_core", "avx512_core_vnni"}
)
# torch capabilities under AVX-512 on x86 (ATen's names): bf16 is not run natively there.
TORCH_BELOW_AVX512 = frozenset({"default", "avx2"})


def bf16_not_native(facts: Facts) -> str | None:
    """Why this host's bf16 matmul is not native (the reason it is recorded, not judged);
    None where the CPU, torch and oneDNN all run it natively."""
    cpu = facts.find("host.cpu")
    flags = set(cpu.get("simd_flags") or []) if isinstance(cpu, dict) else set()
    torch = facts.find("software.torch")
    torch = torch if isinstance(torch, dict) else {}
    if not flags:
        return "the CPU's instruction sets are unknown (no host.cpu.simd_flags fact)"
    if ARM_BF16_FLAG in flags:
        return None
    native = [f for f in X86_BF16_FLAGS if f in flags]
    if not native:
        return (
            "the CPU has no native bf16 (no avx512_bf16, amx_bf16 or arm bf16 flag): torch "
            "computes bf16 through an fp32 reference path"
        )
    capability = torch.get("cpu_capability")
    if isinstance(capability, str) and capability.lower() in TORCH_BELOW_AVX512:
        return (
            f"the CPU has {'/'.join(native)}, but torch's CPU capability is {capability} "
            "(ATEN_CPU_CAPABILITY lowers it): bf16 does not run on the native path"
        )
    cap = torch.get("onednn_max_cpu_isa")
    if isinstance(cap, str) and cap.strip().lower() in ONEDNN_BELOW_BF16:
        return (
            f"the CPU has {'/'.join(native)}, but ONEDNN_MAX_CPU_ISA={cap} caps oneDNN below "
            "its bf16 kernels: bf16 runs through fp32"
        )
    return None
