"""The measuring code itself, run on the CPU with small sizes: the same kernels, timing and
result checks a GPU runs (CUDA-only paths, pinned host copies and flash-attn, cannot run here)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from rigcheck.measure import attention, host_link, matmul, memory_bw, train_step  # noqa: E402
from rigcheck.measure.device import MeasuredDevice  # noqa: E402
from rigcheck.measure.timing import Plan, SyncEvery, Timer  # noqa: E402

CPU = MeasuredDevice("cpu", "cpu", "cpu")
QUICK = Plan(rounds=3, warmup_rounds=1, round_s=0.002)


@pytest.fixture
def timer():
    return Timer(torch.device("cpu"))


@pytest.fixture
def small(monkeypatch):
    """Sizes that finish in milliseconds; the code paths are the real ones."""
    plan = matmul.MatmulPlan(((64, 64, 64), (96, 80, 64)), QUICK, QUICK)
    monkeypatch.setitem(matmul.PLANS, "cpu", plan)
    monkeypatch.setitem(memory_bw.BUFFER_BYTES, "cpu", 2**20)
    monkeypatch.setitem(memory_bw.PLANS, "cpu", QUICK)
    for name, value in {"BATCH": 1, "HEADS": 2, "SEQ": 128, "HEAD_DIM": 32}.items():
        monkeypatch.setattr(attention, name, value)
    monkeypatch.setattr(attention, "PLAN", QUICK)
    for name, value in {"VOCAB": 128, "D_MODEL": 32, "LAYERS": 1, "HEADS": 2, "SEQ": 16}.items():
        monkeypatch.setattr(train_step, name, value)
    monkeypatch.setattr(train_step, "PLAN", QUICK)


@pytest.mark.parametrize("precision", ["fp32", "tf32", "bf16", "fp8"])
def test_matmul_sweeps_shapes_checks_the_result_and_reports_median_and_best(
    small, timer, precision
):
    m = matmul.matmul_tflops(CPU, timer, precision)
    assert m.key == f"matmul_{precision}_tflops" and m.unit == "TFLOP/s"
    assert set(m.details["sweep_tflops"]) == {"64x64x64", "96x80x64"}
    assert m.details["shape"] in ([64, 64, 64], [96, 80, 64])
    assert len(m.samples_s) == QUICK.rounds and 0 < m.value <= m.best
    assert m.details["relative_error"] <= matmul.TOLERANCE[precision]
    assert torch.get_float32_matmul_precision() == "highest"  # restored after tf32


def test_matmul_that_leaves_its_output_unwritten_fails(small, timer, monkeypatch):
    make = matmul.operands

    def lazy(precision, shape, device):
        ops = make(precision, shape, device)
        ops.matmul = lambda a, b: None  # a "kernel" that returns at once and writes nothing
        return ops

    monkeypatch.setattr(matmul, "operands", lazy)
    with pytest.raises(AssertionError, match="left NaN in its output"):
        matmul.matmul_tflops(CPU, timer, "fp32")


def test_matmul_with_wrong_results_fails(small, timer, monkeypatch):
    make = matmul.operands

    def wrong(precision, shape, device):
        ops = make(precision, shape, device)
        ops.matmul = lambda a, b: torch.mm(a, b, out=ops.out).mul_(1.01)  # 1% off
        return ops

    monkeypatch.setattr(matmul, "operands", wrong)
    with pytest.raises(AssertionError, match="fp32 matmul gives wrong results"):
        matmul.matmul_tflops(CPU, timer, "fp32")


def test_copy_and_triad_count_read_plus_written_bytes(small, timer):
    copy = memory_bw.device_copy_gbps(CPU, timer)
    triad = memory_bw.device_triad_gbps(CPU, timer)
    assert copy.details["bytes_counted_per_call"] == 2 * 2**20
    assert triad.details["bytes_counted_per_call"] == 3 * 2**20
    assert "read + write" in copy.definition and "2 read + 1 written" in triad.definition
    assert copy.value > 0 and triad.value > 0


@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_host_link_copies_check_delivery_and_report_pageable_beside_pinned(
    timer, monkeypatch, direction
):
    """A CPU build has no pinned allocator: pin_memory is dropped, the rest runs as on a GPU."""
    empty = torch.empty
    monkeypatch.setattr(torch, "empty", lambda *a, pin_memory=False, **k: empty(*a, **k))
    monkeypatch.setattr(host_link, "COPY_BYTES", 8 * 2**20)
    monkeypatch.setattr(host_link, "PLAN", QUICK)
    monkeypatch.setattr(host_link, "PAGEABLE_PLAN", QUICK)
    m = getattr(host_link, f"{direction}_pinned_gbps")(CPU, timer)
    assert m.key == f"{direction}_pinned_gbps" and m.value > 0
    assert m.details["pageable_gbps"] > 0 and "bytes counted once" in m.definition


@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_a_pinned_copy_that_delivers_nothing_fails(timer, monkeypatch, direction):
    """The pageable copies move the same bytes afterwards: they must not hide it."""
    empty, copy_into = torch.empty, host_link.copy_into
    monkeypatch.setattr(torch, "empty", lambda *a, pin_memory=False, **k: empty(*a, **k))
    monkeypatch.setattr(host_link, "COPY_BYTES", 8 * 2**20)
    monkeypatch.setattr(host_link, "PLAN", QUICK)
    monkeypatch.setattr(host_link, "PAGEABLE_PLAN", QUICK)
    monkeypatch.setattr(
        host_link, "copy_into", lambda dst, src, nb: None if nb else copy_into(dst, src, nb)
    )
    with pytest.raises(AssertionError, match=f"pinned {direction} copy did not deliver"):
        getattr(host_link, f"{direction}_pinned_gbps")(CPU, timer)


def test_sdpa_flash_backend_runs_and_matches_float64(small, timer):
    m = attention.attention_sdpa_tflops(CPU, timer, "bf16")
    assert m.unit == "TFLOP/s" and m.value > 0
    assert m.details["relative_error"] <= attention.TOLERANCE
    assert "4*b*h*s_q*s_k*d" in m.definition


def test_train_step_reports_tokens_per_second_and_model_flops(small, timer):
    m = train_step.train_step_tokens_per_s(CPU, timer, "bf16")
    assert m.unit == "tokens/s" and m.value > 0
    params = 1 * 12 * 32**2 + 32 * 128
    assert m.details["matmul_params"] == params
    assert m.details["flops_per_token"] == 6 * params + 12 * 1 * 32 * 16
    assert train_step.mfu(1000.0, 1.0) == pytest.approx(1000.0 * (6 * params + 12 * 32 * 16) / 1e12)


def test_every_call_writes_new_values_into_the_output():
    ops = matmul.operands("fp32", (8, 8, 8), torch.device("cpu"))
    ops.call()
    first = ops.out.clone()
    ops.call()
    assert not torch.equal(first, ops.out) and ops.last == 1


def test_sync_every_waits_once_per_round():
    waits = []
    calls = SyncEvery(lambda: None, lambda: waits.append(1), n=4)
    for _ in range(12):
        calls()
    assert len(waits) == 3


def test_calls_per_round_fill_the_round(timer):
    n = timer.calls_per_round(lambda: sum(range(10_000)), Plan(rounds=1, round_s=0.01))
    assert n > 1


def test_gpus_are_matched_to_torch_by_pci_bus_id_not_by_index(monkeypatch):
    """CUDA numbers GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; NVML by bus."""
    from types import SimpleNamespace

    from rigcheck.facts import Facts
    from rigcheck.measure.device import DeviceNotVisible, measured_devices, torch_device

    facts = Facts({"devices": [
        {"index": 0, "vendor": "nvidia", "pci": {"bus_id": "0000:18:00.0"}},
        {"index": 1, "vendor": "nvidia", "pci": {"bus_id": "0000:2a:00.0"}},
        {"index": 2, "vendor": "nvidia", "pci": {"bus_id": "0000:3a:00.0"}},
    ]})  # fmt: skip
    torch_order = [(0x2A, 0), (0x18, 0)]  # torch sees two GPUs, in another order
    props = [
        SimpleNamespace(pci_domain_id=d, pci_bus_id=b, pci_device_id=0) for b, d in torch_order
    ]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: len(props))
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: props[i])
    gpu0, gpu1, gpu2 = measured_devices(facts, "cuda")
    assert torch_device(gpu0) == torch.device("cuda", 1)
    assert torch_device(gpu1) == torch.device("cuda", 0)
    with pytest.raises(DeviceNotVisible, match=r"GPU 2 .* not among the 2 device"):
        torch_device(gpu2)
