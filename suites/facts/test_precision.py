"""Number formats: native bf16, a real bf16 matmul, fp8 where the class has it."""

import pytest

from rigcheck.require import (
    cuda_label,
    device_fact,
    expected,
    fact,
    gpu_label,
    needs_backend,
    version_tuple,
)

pytestmark = pytest.mark.facts


def smoke_runs(facts, key: str) -> range:
    """One smoke result per GPU torch sees: a shorter list would let one GPU pass for all."""
    ran, gpus = len(fact(facts, key)), fact(facts, "software.torch.device_count")
    assert ran == gpus, (
        f"{key} holds {ran} results for the {gpus} GPUs torch sees: the smoke test did not "
        "run on every GPU. Record the facts again (`rigcheck facts -o FILE`); if it recurs, "
        "run `python -m rigcheck.facts.host.torch_probe` and read why it stopped."
    )
    return range(gpus)


def test_bf16_native(facts, spec, devices):
    """torch.cuda.is_bf16_supported() says True on pre-Ampere GPUs through emulation."""
    needs_backend(spec, "cuda")
    if not expected(spec, "bf16_native"):
        pytest.skip(f"{spec.title} has no native bf16: bf16 runs emulated (slowly); use fp16")
    emulated = [
        f"{gpu_label(d)}: compute capability {cc}"
        for d, cc in device_fact(devices, "compute_capability", required=True)
        if version_tuple(cc) < (8, 0)
    ]
    assert not emulated, (
        f"bf16 is not native (needs compute capability >= 8.0): {'; '.join(emulated)}"
    )


def test_bf16_matmul_runs(facts, spec):
    key = {"cpu": "smoke.cpu_bf16_matmul", "mps": "smoke.mps.bf16_matmul"}.get(
        spec.backend, "smoke.bf16_matmul"
    )
    if spec.backend in ("cpu", "mps"):
        results = [(spec.backend, key)]
    else:
        results = [(cuda_label(facts, i), f"{key}.{i}") for i in smoke_runs(facts, key)]
    wrong = [
        f"{where}: {facts.find(result)}"
        for where, result in results
        if fact(facts, f"{result}.ok") is False
    ]
    assert not wrong, f"a bf16 matmul did not run or gave a wrong answer: {wrong}"


def test_compute_capability(facts, spec, devices):
    want = expected(spec, "compute_capability")
    other = [
        f"{gpu_label(d)}: {cc}"
        for d, cc in device_fact(
            devices, "gcn_arch" if spec.backend == "rocm" else "compute_capability", required=True
        )
        if not cc.startswith(want)
    ]
    assert not other, f"expected compute capability {want}, found {'; '.join(other)}"


def test_fp8_matmul_runs(facts, spec, devices):
    """Per device, so it waits on the `devices` fixture: a wrong product is identity's failure."""
    needs_backend(spec, "cuda")
    if not expected(spec, "fp8"):
        pytest.skip(f"{spec.title} has no fp8 tensor cores")
    runs = smoke_runs(facts, "smoke.fp8_matmul")
    oks = [(cuda_label(facts, i), fact(facts, f"smoke.fp8_matmul.{i}.ok")) for i in runs]
    wrong = [
        f"{where}: {facts.find(f'smoke.fp8_matmul.{i}')}"
        for i, (where, ok) in enumerate(oks)
        if ok is False
    ]
    assert not wrong, (
        f"an fp8 (e4m3) torch._scaled_mm did not run or gave a wrong answer: {wrong}. "
        "fp8 needs compute capability >= 8.9 and a torch built with CUDA >= 12.1."
    )
