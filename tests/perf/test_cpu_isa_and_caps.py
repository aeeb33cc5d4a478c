"""Issue 38: the cpu class judged against the CPU it is, and every measurement time-capped.

A CPU without native bf16 (AVX2 only, or AVX-512 capped by ATEN_CPU_CAPABILITY or
ONEDNN_MAX_CPU_ISA) computed bf16 through fp32 at 0.0005 TFLOP/s on this project's 2-core AVX2
EPYC VM (torch 2.13, 2026-11-29), under the 0.01 floor: it failed the class after a 132 s to
26 minute measurement. The facts decide now (rigcheck/measure/cpu_isa.py), and the timings are
capped (rigcheck/measure/timing.py) with an injected clock here, so no test depends on load.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest

from rigcheck.facts import Facts
from rigcheck.measure import check, matmul
from rigcheck.measure.check import INCOMPLETE_KEY, PerfCheck, PerfSession
from rigcheck.measure.cpu_isa import bf16_not_native
from rigcheck.measure.device import MeasuredDevice
from rigcheck.measure.measurement import Measurement
from rigcheck.measure.timing import MeasurementIncomplete, Plan, Timer
from rigcheck.plugin.session import incomplete_measurements
from rigcheck.spec import load_spec
from tests.perf.perf_inputs import cpu_facts

CPU = MeasuredDevice("cpu", "cpu", "cpu")
# this machine's flags (lscpu, 2026-11-29: AMD EPYC under KVM, avx2 and fma, no avx512*)
AVX2_ONLY = ["avx", "avx2", "fma", "sse4_2"]


def facts(flags, capability=None, onednn=None) -> Facts:
    data = copy.deepcopy(cpu_facts())
    data["host"]["cpu"]["simd_flags"] = flags
    data["software"]["torch"].update(cpu_capability=capability, onednn_max_cpu_isa=onednn)
    return Facts(data)


@pytest.mark.parametrize(
    ("flags", "capability", "onednn", "said"),
    [
        (AVX2_ONLY, "AVX2", None, "no native bf16"),
        (["avx2", "avx512f", "avx512_bf16", "fma"], "AVX2", None, "CPU capability is AVX2"),
        (["avx2", "avx512f", "amx_bf16", "amx_tile"], "AVX512", "AVX2", "ONEDNN_MAX_CPU_ISA=AVX2"),
        ([], None, None, "instruction sets are unknown"),
    ],
)
def test_bf16_is_not_native_and_says_why(flags, capability, onednn, said):
    assert said in bf16_not_native(facts(flags, capability, onednn))


@pytest.mark.parametrize(
    ("flags", "capability"),
    [
        (["avx2", "avx512f", "avx512_bf16", "fma"], "AVX512"),
        (["avx2", "avx512f", "amx_bf16", "amx_tile"], None),  # an older snapshot: no capability
        (["asimd", "bf16", "sve"], "SVE256"),  # Graviton3 / Neoverse V1
    ],
)
def test_bf16_is_native(flags, capability):
    assert bf16_not_native(facts(flags, capability, "avx512_core_amx")) is None


class Request:
    def __init__(self):
        self.node = SimpleNamespace(nodeid="suite::check")
        self.config = SimpleNamespace(pluginmanager=None, stash=pytest.Stash())


def perf_check(machine: Facts) -> tuple[PerfCheck, list]:
    recorded = []
    session = PerfSession()
    perf = PerfCheck(
        session, Request(), load_spec("cpu"), machine, None, lambda *a: recorded.append(a)
    )
    return perf, recorded


def emulated_bf16(monkeypatch):
    slow = Measurement("matmul_bf16_tflops", "cpu", 0.0005, "TFLOP/s", "512^3 bf16")
    monkeypatch.setattr(check, "run_live", lambda *a: slow)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)


def test_bf16_on_an_avx2_cpu_is_recorded_not_judged(monkeypatch):
    emulated_bf16(monkeypatch)
    perf, recorded = perf_check(facts(AVX2_ONLY, "AVX2"))
    with pytest.raises(pytest.skip.Exception, match="NOT JUDGED: the CPU has no native bf16"):
        perf.check("matmul_bf16_tflops", CPU)
    assert [m.value for _, m in perf.session.unjudged] == [0.0005]
    assert recorded[0][0] == "rigcheck_measurement" and recorded[0][1]["judged"] is False


def test_bf16_on_a_native_cpu_is_still_judged_against_its_floor(monkeypatch):
    emulated_bf16(monkeypatch)
    perf, _ = perf_check(facts(["avx2", "avx512f", "avx512_bf16", "fma"], "AVX512"))
    with pytest.raises(pytest.fail.Exception, match="below the floor"):
        perf.check("matmul_bf16_tflops", CPU)


def test_fp32_is_judged_whatever_the_isa(monkeypatch):
    slow = Measurement("matmul_fp32_tflops", "cpu", 0.001, "TFLOP/s", "fp32")
    monkeypatch.setattr(check, "run_live", lambda *a: slow)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    perf, _ = perf_check(facts(AVX2_ONLY, "AVX2"))
    with pytest.raises(pytest.fail.Exception, match="below the floor"):
        perf.check("matmul_fp32_tflops", CPU)


class Clock:
    """A clock that each call moves on by `step` seconds: every call 'takes' that long."""

    def __init__(self, step: float):
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_timing_that_cannot_fit_its_cap_is_incomplete_at_once():
    calls = []
    timer = Timer(SimpleNamespace(type="cpu"), cap_s=10, clock=Clock(3.0))
    with pytest.raises(MeasurementIncomplete, match=r"6 rounds need 18\.0 s, more than"):
        timer.time(lambda: calls.append(1), Plan(rounds=5, warmup_rounds=1, round_s=0.1))
    assert len(calls) == 2  # the warm-up and the one timed call, never the rounds


def test_calls_per_round_shrink_to_the_time_left():
    timer = Timer(SimpleNamespace(type="cpu"), cap_s=100, clock=Clock(1.0))
    plan = Plan(rounds=4, warmup_rounds=1, round_s=50.0)  # would ask for 50 calls a round
    assert timer.calls_per_round(lambda: None, plan) == 9  # floor(~97 s x 0.5 / 5 rounds)


def test_the_cpu_matmul_shrinks_its_shape_to_its_aim(monkeypatch):
    rate = 0.0005  # TFLOP/s, emulated bf16
    monkeypatch.setattr(matmul, "operands", lambda *a: SimpleNamespace(call=lambda: None))
    timer = Timer(
        SimpleNamespace(type="cpu"), cap_s=30, clock=Clock(matmul.tflop((256,) * 3) / rate)
    )
    shapes, probed = matmul.fitting_shapes("bf16", matmul.shapes_for("cpu", "bf16"), timer)
    assert shapes == ((512, 512, 512),) and probed == pytest.approx(rate)


def test_the_cpu_matmul_keeps_its_plan_where_it_fits(monkeypatch):
    monkeypatch.setattr(matmul, "operands", lambda *a: SimpleNamespace(call=lambda: None))
    timer = Timer(
        SimpleNamespace(type="cpu"), cap_s=30, clock=Clock(matmul.tflop((256,) * 3) / 0.5)
    )
    shapes, _ = matmul.fitting_shapes("fp32", matmul.shapes_for("cpu", "fp32"), timer)
    assert shapes == matmul.PLANS["cpu"].shapes


def test_a_cpu_too_slow_for_even_the_smallest_shape_is_incomplete(monkeypatch):
    monkeypatch.setattr(matmul, "operands", lambda *a: SimpleNamespace(call=lambda: None))
    timer = Timer(SimpleNamespace(type="cpu"), cap_s=30, clock=Clock(5.0))
    with pytest.raises(MeasurementIncomplete, match="even 256x256x256 needs"):
        matmul.fitting_shapes("bf16", matmul.shapes_for("cpu", "bf16"), timer)


def test_an_incomplete_measurement_makes_the_run_incomplete(monkeypatch):
    def stalls(*a):
        raise MeasurementIncomplete("one call takes 14 s")

    monkeypatch.setattr(check, "run_live", stalls)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    perf, _ = perf_check(facts(AVX2_ONLY, "AVX2"))
    with pytest.raises(pytest.skip.Exception, match="INCOMPLETE: matmul_fp32_tflops on cpu"):
        perf.check("matmul_fp32_tflops", CPU)
    config = perf.request.config
    assert config.stash[INCOMPLETE_KEY] == ["matmul_fp32_tflops on cpu: one call takes 14 s"]
    assert incomplete_measurements(config).startswith("1 measurement(s) could not finish")
    assert incomplete_measurements(SimpleNamespace(stash=pytest.Stash())) is None
