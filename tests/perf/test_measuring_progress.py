"""Issue 24: a live measurement is shown while it runs (rigcheck.progress), outside pytest's
capture and on a fresh line; a replayed one is not (nothing runs)."""

from __future__ import annotations

from types import SimpleNamespace

from rigcheck.facts import Facts
from rigcheck.measure import check
from rigcheck.measure.catalogue import Entry
from rigcheck.measure.check import PerfCheck, PerfSession
from rigcheck.measure.device import MeasuredDevice
from rigcheck.measure.measurement import Measurement
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

CPU = MeasuredDevice("cpu", "cpu", "cpu")
ENTRY = Entry("matmul_fp32_tflops", "TFLOP/s", None, lambda spec, facts, device: None)


class Plugins:
    """pytest's plugin manager as the progress display asks it: the terminal reporter only."""

    def __init__(self):
        self.newlines = 0

    def getplugin(self, name):
        return self if name == "terminalreporter" else None

    def ensure_newline(self):
        self.newlines += 1


def live_check(plugins: Plugins, benchmark: object) -> PerfCheck:
    request = SimpleNamespace(
        node=SimpleNamespace(nodeid="suite::check"),
        config=SimpleNamespace(pluginmanager=plugins),
    )
    facts = Facts(synthetic_snapshot(load_spec("cpu")))
    return PerfCheck(PerfSession(), request, load_spec("cpu"), facts, benchmark, lambda *a: None)


def test_a_live_measurement_is_one_line_while_it_runs(monkeypatch, capsys):
    ran = []
    measured = Measurement("matmul_fp32_tflops", "cpu", 1.0, "TFLOP/s", "d")

    def run_live(entry, device, spec, benchmark):
        ran.append((entry.key, device.label, spec.name, benchmark))
        return measured

    monkeypatch.setattr(check, "run_live", run_live)
    plugins = Plugins()
    perf = live_check(plugins, benchmark="the fixture")
    assert perf._measure(ENTRY, CPU, attempt=0) is measured
    assert perf._measure(ENTRY, CPU, attempt=1) is measured
    line = "rigcheck: measuring matmul_fp32_tflops on cpu (at most 30 s)\n"  # its time cap
    assert capsys.readouterr().out == line * 2
    assert plugins.newlines == 2  # not after pytest's progress dots
    assert ran == [
        ("matmul_fp32_tflops", "cpu", "cpu", "the fixture"),
        ("matmul_fp32_tflops", "cpu", "cpu", None),  # a second attempt is not benchmarked
    ]
