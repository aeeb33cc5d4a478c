"""A perf check: measure, judge against the class's figure, retry once, record, then verdict.

    FAIL (below the floor)  -> measured once more; still below: pytest.fail with the numbers
    FAIL (no reference)     -> pytest.fail at once: "no reference for this class"
    WARN (under achievable) -> BelowAchievableWarning, and the check passes
    PASS

Every outcome records its Judgement (rigcheck.verdict.record) for the reports, and the derived
figures go into pytest-benchmark's extra_info beside the stored timings.
"""

from __future__ import annotations

import os
import statistics
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import pytest

from rigcheck.detect import describe_devices, identity_problems
from rigcheck.facts import Facts
from rigcheck.measure import machine_lock
from rigcheck.measure.catalogue import CATALOGUE, Entry, half_precision
from rigcheck.measure.cpu_isa import bf16_not_native
from rigcheck.measure.cpu_peak import cpu_peak_tflops
from rigcheck.measure.device import DeviceNotVisible, MeasuredDevice, torch_device
from rigcheck.measure.measurement import Measurement
from rigcheck.measure.replay import ReplayedMeasurements, ReplayError
from rigcheck.measure.telemetry import Telemetry, explain
from rigcheck.measure.timing import MeasurementIncomplete, cap_s
from rigcheck.measure.train_step import mfu
from rigcheck.spec import Spec
from rigcheck.verdict import FAIL, PASS, WARN, Judgement, judge, record

NORMAL_SPREAD = 0.05  # ~5% between identical GPUs in one node is normal (Azure health checks)
OUTLIER = 0.10  # a device this far under the median of the others is a finding: it fails
HINT = {
    "below": "Look at the telemetry above, `nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE`, "
    "other processes on the device, and the kernel log (`dmesg | grep -i xid`).",
    "none": "Add the figure, with its source, to the class's spec file to judge it.",
    "spread": "Read the slow device's own check above (its clocks, temperature and throttle "
    "reasons during the run) and `nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE -i INDEX`.",
}


# The measurements that could not finish within their time cap; the run's reports read it.
INCOMPLETE_KEY = pytest.StashKey[list]()


class BelowAchievableWarning(UserWarning):
    """A figure above its floor but more than the spec's warning band under the achievable one."""


class DeviceSpreadWarning(UserWarning):
    """Devices of one machine disagree by more than the normal ~5%, without a clear outlier."""


@dataclass
class Result:
    nodeid: str
    device: MeasuredDevice
    measurement: Measurement
    judgement: Judgement


@dataclass
class PerfSession:
    """What a session's perf checks share: the replay source, and every result so far."""

    replay: ReplayedMeasurements | None = None
    facts_replayed_from: str | None = None
    results: list[Result] = field(default_factory=list)
    unjudged: list[tuple[MeasuredDevice, Measurement]] = field(default_factory=list)

    def values(self, key: str) -> dict[str, Result]:
        return {r.device.ident: r for r in self.results if r.measurement.key == key}


class PerfCheck:
    """The `perf` fixture: runs the checks of one test."""

    def __init__(
        self,
        session: PerfSession,
        request: pytest.FixtureRequest,
        spec: Spec,
        facts: Facts,
        benchmark: Any,
        record_property: Any,
    ):
        self.session, self.request, self.spec, self.facts = session, request, spec, facts
        self.benchmark, self.record_property = benchmark, record_property

    def check(self, key: str, device: MeasuredDevice) -> Judgement | None:
        entry = CATALOGUE[key]
        self._preconditions(entry, device)
        figure = figure_for(self.spec, self.facts, key)
        measurement = self._measure(entry, device, attempt=0)
        unjudged = not_judged_here(self.spec, self.facts, key)
        if unjudged:
            self._record_unjudged(device, measurement)
            pytest.skip(
                f"{device.label}: {key} measured {_fmt(measurement.value)} {measurement.unit} "
                f"({measurement.details.get('shape') or ''}), NOT JUDGED: {unjudged}; its floor "
                "applies to native bf16 only"
            )
        judgement = judge(key, measurement.value, figure)
        first = None
        if judgement.verdict == FAIL and judgement.floor is not None:
            first = measurement
            measurement = self._measure(entry, device, attempt=1)
            judgement = judge(key, measurement.value, figure)
        measurement.details.update(derived(self.spec, measurement))
        self._report(device, measurement, judgement, first)
        if judgement.verdict == FAIL:
            pytest.fail(failure_message(device, measurement, judgement, first), pytrace=False)
        if judgement.verdict == WARN:
            text = f"{device.label}: {key} {judgement.reason}; {explain(measurement.telemetry)}"
            warnings.warn(BelowAchievableWarning(text), stacklevel=2)
        return judgement

    def spread(self, key: str, devices: list[MeasuredDevice]) -> None:
        if len(devices) < 2:
            pytest.skip("one device: nothing to compare across devices")
        results = self.session.values(key)
        missing = [d.label for d in devices if d.ident not in results]
        if len(results) < 2:
            pytest.skip(
                f"{key} was measured on {len(results)} device(s): see the per-device checks"
            )
        values = {r.device.label: r.measurement.value for r in results.values()}
        unit = next(iter(results.values())).measurement.unit
        self.record_property("rigcheck_spread", {"figure": key, "unit": unit, "values": values})
        verdict, message = spread_finding(values, unit)
        if missing:
            message += f" (not measured: {', '.join(missing)})"
        if verdict == FAIL:
            pytest.fail(f"{key}: {message}. {HINT['spread']}", pytrace=False)
        if verdict == WARN:
            warnings.warn(DeviceSpreadWarning(f"{key}: {message}"), stacklevel=2)

    def _preconditions(self, entry: Entry, device: MeasuredDevice) -> None:
        # A wrong product, or none at all, already fails test_identity.py naming both: measuring
        # it against this class would only repeat that failure once per figure.
        problems = identity_problems(self.facts, self.spec)
        if problems:
            pytest.skip(f"not a {self.spec.name} machine (test_identity fails): {problems[0]}")
        if device.ident == "none":
            pytest.fail(
                f"no {self.spec.title} to measure: {describe_devices(self.facts)}", pytrace=False
            )
        reason = entry.not_applicable(self.spec, self.facts, device)
        if reason:
            pytest.skip(reason)
        if self.session.replay is None:
            if self.session.facts_replayed_from:
                pytest.skip(
                    f"facts replayed from {self.session.facts_replayed_from}: measurements need "
                    "the live machine, or recorded ones with --replay-measurements FILE"
                )
            worker = os.environ.get("PYTEST_XDIST_WORKER")
            if worker or hasattr(self.request.config, "workerinput"):
                pytest.fail(
                    f"measurements never run under pytest-xdist (this is worker {worker}): "
                    "kernels running side by side measure each other. Run the perf checks "
                    "without -n, e.g. pytest -m 'CLASS and perf' -p no:xdist",
                    pytrace=False,
                )

    def _measure(self, entry: Entry, device: MeasuredDevice, attempt: int) -> Measurement:
        if self.session.replay is not None:
            try:
                replay = self.session.replay
                return replay.measurement(
                    entry.key, entry.unit, device.ident, device.label, attempt
                )
            except ReplayError as exc:
                pytest.fail(str(exc), pytrace=False)
        from rigcheck.progress import phase, tell

        config, cap = self.request.config, cap_s(device.backend)
        machine_lock.take(lambda line: tell(config, line))  # no other rigcheck measures meanwhile
        with phase(config, f"measuring {entry.key} on {device.label}", cap, cap=True):
            try:
                return run_live(entry, device, self.spec, self.benchmark if attempt == 0 else None)
            except MeasurementIncomplete as exc:
                reason = f"{entry.key} on {device.label}: {exc}"
                config.stash.setdefault(INCOMPLETE_KEY, []).append(reason)
        pytest.skip(f"INCOMPLETE: {reason} (the run is INCOMPLETE, not a pass)")

    def _record_unjudged(self, device: MeasuredDevice, measurement: Measurement) -> None:
        """The figure kept in the reports and benchmark.json, with no verdict."""
        self.session.unjudged.append((device, measurement))
        summary = {"value": measurement.value, "best": measurement.best,
                   "unit": measurement.unit, "definition": measurement.definition,
                   "wall_s": measurement.wall_s, "origin": measurement.origin,
                   "judged": False}  # fmt: skip
        self.record_property("rigcheck_measurement", summary)
        if self.benchmark is not None:
            self.benchmark.extra_info.update({**summary, "device": device.label,
                                              "details": measurement.details})  # fmt: skip

    def _report(self, device, measurement, judgement, first) -> None:
        record(self.record_property, judgement)
        summary = {
            "value": measurement.value,
            "best": measurement.best,
            "unit": measurement.unit,
            "definition": measurement.definition,
            "wall_s": measurement.wall_s,
            "origin": measurement.origin,
            "telemetry": measurement.telemetry,
        }
        self.record_property("rigcheck_measurement", summary)
        extra = {
            **summary,
            "figure": judgement.figure,
            "device": device.label,
            "verdict": judgement.verdict,
            "floor": judgement.floor,
            "achievable": judgement.achievable,
            "datasheet": judgement.datasheet,
            "ratio_to_datasheet": judgement.ratio_to_datasheet,
            "details": measurement.details,
        }
        if first is not None:
            extra["first_attempt"] = first.value
            self.record_property("rigcheck_first_attempt", first.value)
        if self.benchmark is not None:
            self.benchmark.extra_info.update(extra)
        result = Result(self.request.node.nodeid, device, measurement, judgement)
        self.session.results.append(result)


def run_live(entry: Entry, device: MeasuredDevice, spec: Spec, benchmark: Any) -> Measurement:
    """Time the kernels on the device; torch's warnings meanwhile go into the details."""
    from rigcheck.measure.timing import Timer

    started = time.perf_counter()
    with Telemetry(device) as telemetry, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            timer = Timer(torch_device(device), benchmark, cap_s=cap_s(device.backend))
            measurement = entry.run(device, timer, spec)
        except MeasurementIncomplete:
            raise
        except DeviceNotVisible as exc:
            pytest.fail(f"cannot measure {entry.key}: {exc}", pytrace=False)
        except Exception as exc:
            said = "; ".join(dict.fromkeys(str(w.message) for w in caught))
            pytest.fail(
                f"{entry.key} could not be measured on {device.label}: "
                f"{type(exc).__name__}: {exc}" + (f" (torch warned: {said})" if said else ""),
                pytrace=False,
            )
    measurement.wall_s = round(time.perf_counter() - started, 3)
    measurement.telemetry = telemetry.summary()
    if caught:
        measurement.details["warnings"] = list(dict.fromkeys(str(w.message) for w in caught))
    return measurement


def not_judged_here(spec: Spec, facts: Facts, key: str) -> str | None:
    """Why the cpu class records this figure without judging it: bf16 on a CPU that does not
    run it natively (rigcheck/measure/cpu_isa.py); None where it is judged."""
    if spec.backend != "cpu" or key != "matmul_bf16_tflops":
        return None
    return bf16_not_native(facts)


def figure_for(spec: Spec, facts: Facts, key: str) -> dict[str, Any] | None:
    """The class's figure; a cpu matmul figure gets its datasheet peak from this host's facts."""
    figure = spec.figures.get(key)
    if figure is None or spec.backend != "cpu" or figure.get("datasheet") is not None:
        return figure
    precision = key.removeprefix("matmul_").removesuffix("_tflops")
    peak = cpu_peak_tflops(facts, precision) if key.startswith("matmul_") else None
    if peak is None:
        return figure
    return {**figure, "datasheet": {"value": peak.tflops, "source": f"computed: {peak.formula}"}}


def derived(spec: Spec, measurement: Measurement) -> dict[str, Any]:
    """Figures computed from a measurement: a training step's model FLOPs utilisation."""
    if measurement.key != "train_step_tokens_per_s":
        return {}
    precision = measurement.details.get("precision") or half_precision(spec)
    peak = (spec.figures.get(f"matmul_{precision}_tflops") or {}).get("datasheet")
    if not peak:
        return {"mfu": None, "mfu_reason": f"no datasheet {precision} peak in the spec"}
    return {"mfu": mfu(measurement.value, peak["value"]), "mfu_peak_tflops": peak["value"]}


def failure_message(device, measurement, judgement, first) -> str:
    m = measurement
    best = f", best {m.best:.4g}" if m.best else ""
    lines = [
        f"{device.label}: {judgement.figure} {judgement.reason}",
        f"Measured {m.value:.4g} {m.unit} (median{best}, {m.origin}): {m.definition}.",
    ]
    if judgement.floor is None:
        lines.append(HINT["none"])
        return "\n".join(lines)
    if first is not None:
        lines.append(f"Retried once: the first attempt measured {first.value:,.1f} {first.unit}.")
    lines.append(explain(measurement.telemetry) + ".")
    lines.append(HINT["below"])
    return "\n".join(lines)


def spread_finding(values: dict[str, float], unit: str) -> tuple[str, str]:
    """(verdict, message) for one figure across a machine's devices."""
    outliers = []
    for label, value in values.items():
        others = statistics.median(v for k, v in values.items() if k != label)
        if value < others * (1 - OUTLIER):
            outliers.append(
                f"{label}: {_fmt(value)} {unit}, others {_fmt(others)} "
                f"({1 - value / others:.0%} slower)"
            )
    fastest, slowest = max(values.values()), min(values.values())
    spread = (fastest - slowest) / fastest
    if outliers:
        return FAIL, "; ".join(outliers)
    slow = min(values, key=values.get)
    fast = max(values, key=values.get)
    text = (
        f"spread {spread:.1%} across {len(values)} devices (normal is up to "
        f"{NORMAL_SPREAD:.0%}): slowest {slow} {_fmt(slowest)} {unit}, "
        f"fastest {fast} {_fmt(fastest)} {unit}"
    )
    return (WARN if spread > NORMAL_SPREAD else PASS), text


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"
