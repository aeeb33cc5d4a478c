"""Every figure in expected/*.json cites what a user can open: a public source, or a rigcheck
recording kept in fixtures/ with its evidence. Two ways a source fails:

- it names a path outside this repository (the developers' shared/reference/ notes, a home or
  /work directory, ../): a user who clones rigcheck cannot open it;
- it claims a run by rigcheck ("rigcheck:", "rigcheck lent machine", "measured by rigcheck")
  without naming a file under fixtures/ that holds that recording ("kind": "recorded") of that
  figure.

Applies to every spec file, present and future (glob over expected/).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted(p for p in (ROOT / "expected").glob("*.json") if p.name != "spec.schema.json")
OUTSIDE = re.compile(r"shared/reference|(?<![\w.:/-])(?:/work|/home|/tmp|/root|~)/|\.\./")
# A path in this repository: a top-level folder of it, not inside a URL or another repo's path.
IN_REPO = re.compile(
    r"(?<![\w.:/-])((?:docs|fixtures|rigcheck|suites|tests|tools|expected)/[\w./-]+)"
)
# A claim of a run: anywhere, these words (not negated); in an achievable tier, also a source
# starting "rigcheck:" (tests/spec/test_peer_gates.py counts those as recorded by rigcheck).
CLAIMS_A_RUN = re.compile(r"rigcheck lent machine|(?<!not )(?:measured|recorded) by rigcheck", re.I)
FIXTURE = re.compile(r"fixtures/[\w./-]+\.json")


def strings(data, path: str = "") -> Iterator[tuple[str, str]]:
    """(where, text) of every string in a spec, keys like figures.device_copy_gbps.floor.source."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from strings(value, f"{path}.{key}" if path else key)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from strings(value, f"{path}[{i}]")
    elif isinstance(data, str):
        yield path, data


def outside_paths(text: str) -> list[str]:
    """The paths a text names that a user of this repository cannot open."""
    missing = [p.rstrip(".") for p in IN_REPO.findall(text) if not (ROOT / p.rstrip(".")).exists()]
    return [m.group(0) for m in OUTSIDE.finditer(text)] + missing


def claims_a_run(where: str, text: str) -> bool:
    achievable = where.endswith("achievable.source") and text.startswith("rigcheck:")
    return achievable or CLAIMS_A_RUN.search(text) is not None


def unbacked_claim(text: str, figure: str, where: str = "achievable.source") -> str | None:
    """Why a claim of a rigcheck run is not backed by a recording in fixtures/, or None."""
    if not claims_a_run(where, text):
        return None
    for name in FIXTURE.findall(text):
        path = ROOT / name.rstrip(".")
        if path.is_file() and _holds(json.loads(path.read_text()), figure):
            return None
    return f"claims a rigcheck run but names no fixtures/ recording of {figure}"


def _holds(recording: dict, figure: str) -> bool:
    """A recording (kind 'recorded', not synthetic) that holds this figure's values."""
    return recording.get("kind") == "recorded" and figure in json.dumps(recording)


def problems(spec: Path) -> list[str]:
    found = []
    for where, text in strings(json.loads(spec.read_text())):
        if where == "$schema":
            continue
        found += [f"{where}: names {p!r}, not in this repository" for p in outside_paths(text)]
        figure = where.split(".")[1] if where.startswith("figures.") else where
        why = unbacked_claim(text, figure, where)
        if why:
            found.append(f"{where}: {why}")
    return found


@pytest.mark.parametrize("spec", SPECS, ids=[p.stem for p in SPECS])
def test_every_source_can_be_opened_and_every_rigcheck_run_is_in_fixtures(spec):
    assert problems(spec) == []


@pytest.mark.parametrize(
    "text",
    [
        "rigcheck hardware reference (shared/reference/hardware.md): 1759 GB/s",
        "copied from /work/shared/notes.md",
        "see ../peers/limits.md",
        "docs/reference/no-such-file.md",
    ],
)
def test_a_path_outside_the_repository_is_named(text):
    assert outside_paths(text)


@pytest.mark.parametrize(
    "text",
    [
        "https://microsoft.github.io/superbenchmark/docs/user-tutorial/data-diagnosis",
        "NVIDIA/DCGM nvvs/plugin_src/pcie/Pcie.cpp; ROCm/cvs (cvs/tests/**)",
        "fixtures/measurements/cpu-ci-recorded.json",
        "te42kyfo/gpu-benches gpu-stream/h200.txt",
    ],
)
def test_public_sources_and_files_of_this_repository_pass(text):
    assert outside_paths(text) == []


@pytest.mark.parametrize(
    ("text", "backed"),
    [
        ("rigcheck lent machine, 2026-11, one run: ~3.0 TB/s", False),
        ("rigcheck: 0.483 GB/s", False),
        ("measured by rigcheck on a real H200", False),
        ("rigcheck: fixtures/measurements/cpu-ci-allreduce-recorded.json: 0.483 GB/s", True),
        # a file that exists but is synthetic, or holds other figures, backs nothing
        ("rigcheck: fixtures/measurements/h100-synthetic.json", False),
        ("rigcheck: fixtures/measurements/cpu-ci-recorded.json", False),
        ("rigcheck floor policy: 0.8 x achievable", True),
        ("allowance, not a measurement. Not measured by rigcheck: its synthetic snapshot", True),
        ("stas00/ml-engineering MAMF table: 794.5", True),
    ],
)
def test_a_claimed_rigcheck_run_needs_its_recording(text, backed):
    assert (unbacked_claim(text, "allreduce_busbw_gbps") is None) is backed


def test_rigcheck_colon_is_a_claim_in_an_achievable_tier_only():
    policy = "rigcheck: a CPU-only host has no accelerator"
    assert unbacked_claim(policy, "gpu_count", "expect.gpu_count.source") is None
    assert unbacked_claim(policy, "x", "figures.x.achievable.source") is not None
