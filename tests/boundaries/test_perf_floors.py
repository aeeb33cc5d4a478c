"""Every perf floor and warning band of every class, judged by the real perf suite on replayed
measurements: just below the floor fails (after its retry), at and just above it passes, and at
the achievable figure's warning edge the warning starts just below, not at it."""

from __future__ import annotations

import re

import pytest
from class_turns import this_turn

from rigcheck.measure.catalogue import CATALOGUE
from rigcheck.spec import load_spec, spec_dir
from rigcheck.testing.synthetic import synthetic_snapshot

EPS = 1e-6  # relative: far below any figure's precision, far above float rounding
DEFAULT_BAND = 0.1  # rigcheck.verdict.judge's band when a figure names none


def points(figure: dict) -> list[tuple[str, float]]:
    """(name, value) of every boundary the figure has."""
    floor = figure["floor"]["value"]
    found = [
        ("below floor", floor * (1 - EPS)),
        ("at floor", floor),
        ("above floor", floor * (1 + EPS)),
    ]
    if figure.get("achievable"):
        edge = figure["achievable"]["value"] * (1 - figure.get("warn_band", DEFAULT_BAND))
        found += [("at warn edge", edge), ("below warn edge", edge * (1 - EPS))]
    return found


def padded(found: list[tuple[str, float]], count: int) -> list[tuple[str, float]]:
    return found + [found[2]] * (count - len(found))


def expected_verdict(figure: dict, value: float) -> str:
    """The spec's rule (README, Measurements): under the floor fails; more than the band under
    achievable warns; otherwise passes."""
    if value < figure["floor"]["value"]:
        return "fail"
    achievable = figure.get("achievable")
    band = figure.get("warn_band", DEFAULT_BAND)
    if achievable and value < achievable["value"] * (1 - band):
        return "warn"
    return "pass"


def floored(spec) -> dict[str, dict]:
    """The class's figures with a floor that the perf suite measures."""
    return {k: f for k, f in spec.figures.items() if f.get("floor") and k in CATALOGUE}


def replay(values: dict[str, dict[str, float]]) -> dict:
    entries = [
        {"key": key, "device": device, "value": value}
        for key, per_device in values.items()
        for device, value in per_device.items()
    ]
    return {
        "rigcheck_measurements": 1,
        "kind": "synthetic",
        "note": "tests/boundaries: values at each floor and warning edge of the spec",
        "measurements": entries,
    }


def device_of(test_name: str) -> str:
    return re.search(r"\[(gpu\d+|cpu|mps)[-\]]", test_name).group(1).removeprefix("gpu")


def check_judged(run, figures, values_of, label):
    """Every floored figure judged on every device with the spec's verdict and a message that
    says why; returns how many judgements were checked."""
    judged = {}
    for name, judgement in run.judgements.items():
        judged[(judgement["figure"], device_of(name))] = (name, judgement)
    checked = 0
    for key, figure in figures.items():
        for device, (point, value) in values_of(key).items():
            assert (key, device) in judged, (
                f"{label}: {key} on device {device} ({point}) was not judged\n" + run.describe()
            )
            name, judgement = judged[(key, device)]
            want = expected_verdict(figure, value)
            assert (judgement["verdict"], judgement["measured"]) == (want, value), (
                f"{label}: {key} {point} ({value!r}, floor {figure['floor']['value']}): "
                f"judged {judgement['verdict']}, the spec says {want}"
            )
            assert run.outcomes[name] == ("failed" if want == "fail" else "passed"), run.describe(
                [name]
            )
            if want == "fail":
                assert f"{key} below the floor: measured" in run.messages[name], run.messages[name]
                assert f"(floor {_show(figure['floor']['value'])}," in run.messages[name]
            elif want == "warn":
                assert "under the achievable figure" in judgement["reason"], judgement
            checked += 1
    return checked


def _show(v: float) -> str:
    return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.3g}"


def class_names() -> list[str]:
    """Every class with a spec file: a new one is covered with no new test code."""
    return sorted(p.stem for p in spec_dir().glob("*.json") if p.stem != "spec.schema")


GPU_CLASSES = [n for n in class_names() if load_spec(n).backend in ("cuda", "rocm")]
HOST_CLASSES = [n for n in class_names() if n not in GPU_CLASSES]


# One turn of the classes per run (tests/class_turns.py): every class over four commits.
@pytest.mark.parametrize("name", this_turn(GPU_CLASSES))
def test_gpu_class_floors(run_suite, name):
    """One device per boundary point: GPU i is measured at point i of every figure."""
    spec = load_spec(name)
    figures = floored(spec)
    assert figures, f"{name} has no perf floor to test"
    count = max(len(points(f)) for f in figures.values())
    # A figure with fewer points has its remaining devices just above the floor.
    per_figure = {k: dict(enumerate(padded(points(f), count))) for k, f in figures.items()}
    values = {k: {str(i): v for i, (_, v) in p.items()} for k, p in per_figure.items()}
    facts = synthetic_snapshot(spec, gpus=count)
    run = run_suite(
        "perf", "-m", f"{name} and perf", "--gpus", str(count), "-k", "not spread",
        facts=facts, replay=replay(values),
    )  # fmt: skip
    checked = check_judged(
        run, figures, lambda k: {str(i): p for i, p in per_figure[k].items()}, name
    )
    assert checked >= 3 * len(figures)


@pytest.mark.parametrize("name", this_turn(HOST_CLASSES))
def test_host_class_floors(run_suite, name):
    """The host (cpu) or the Apple GPU (mps) is one device: one run per boundary point."""
    spec = load_spec(name)
    figures = floored(spec)
    assert figures, f"{name} has no perf floor to test"
    facts = synthetic_snapshot(spec)
    if spec.backend == "cpu":
        facts = with_native_bf16(facts)
    ident = "mps" if spec.backend == "mps" else "cpu"
    for i in range(max(len(points(f)) for f in figures.values())):
        at = {k: points(f)[i] for k, f in figures.items() if i < len(points(f))}
        values = {k: {ident: v} for k, (_, v) in at.items()}
        run = run_suite(
            "perf", "-m", f"{name} and perf", "-k", "not spread",
            facts=facts, replay=replay(values),
        )  # fmt: skip
        subset = {k: figures[k] for k in at}
        check_judged(run, subset, lambda k, at=at: {ident: at[k]}, f"{name} point {i}")


def with_native_bf16(facts: dict) -> dict:
    """The synthetic cpu host (an i7-1185G7, Tiger Lake: AVX-512 but no AVX512_BF16) given
    Sapphire Rapids' bf16 flags: the cpu class's bf16 floor applies to native bf16 only
    (rigcheck/measure/cpu_isa.py), so its boundaries are judged on a CPU that has it."""
    cpu = facts["host"]["cpu"]
    flags = sorted({*cpu["simd_flags"], "avx512_bf16", "amx_bf16", "amx_tile"})
    host = {**facts["host"], "cpu": {**cpu, "simd_flags": flags}}
    return {**facts, "host": host}


@pytest.mark.parametrize("name", [n for n in HOST_CLASSES if load_spec(n).backend == "cpu"])
def test_bf16_below_the_floor_on_a_cpu_without_native_bf16_is_not_judged(run_suite, name):
    """The same figure under its floor on the synthetic host as it is (no native bf16): recorded,
    skipped NOT JUDGED with the reason, never failed; fp32 beside it is still judged."""
    spec = load_spec(name)
    facts = synthetic_snapshot(spec)
    assert facts["software"]["torch"]["cpu_capability"] == "AVX512"  # the ISA is not the reason
    bf16, fp32 = (spec.figures[f"matmul_{p}_tflops"]["floor"]["value"] for p in ("bf16", "fp32"))
    values = {"matmul_bf16_tflops": {"cpu": bf16 * 0.5}, "matmul_fp32_tflops": {"cpu": fp32 * 0.5}}
    run = run_suite(
        "perf", "-m", f"{name} and perf", "-k", "matmul and not spread",
        facts=facts, replay=replay(values),
    )  # fmt: skip
    judged = {j["figure"]: (n, j) for n, j in run.judgements.items()}
    assert "matmul_bf16_tflops" not in judged, run.describe()
    unjudged = [n for n, m in run.messages.items() if "matmul_bf16_tflops" in m]
    assert len(unjudged) == 1 and run.outcomes[unjudged[0]] == "skipped", run.describe()
    assert "NOT JUDGED: the CPU has no native bf16" in run.messages[unjudged[0]]
    name_fp32, fp32_judgement = judged["matmul_fp32_tflops"]
    assert fp32_judgement["verdict"] == "fail" and run.outcomes[name_fp32] == "failed"
