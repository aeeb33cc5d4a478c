"""Real kernel-log lines from public reports (fixtures/realworld/kernel_log.json): each excerpt
is parsed as the kernel-log probe parses it and each event judged as the suite judges it, and
the suite's check fails the node exactly when the excerpt holds a machine or driver fault.

`python tests/realworld/test_kernel_log_corpus.py` prints the table of kinds, counts and lines
judged right that docs and notes quote.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from check_calls import call  # noqa: E402

from rigcheck.facts import Facts  # noqa: E402
from rigcheck.facts.kernel_log import amdgpu as amdgpu_log  # noqa: E402
from rigcheck.facts.kernel_log import mlx5 as mlx5_log  # noqa: E402
from rigcheck.facts.kernel_log import nvrm as nvrm_log  # noqa: E402
from rigcheck.facts.kernel_log import reader as kernel_log  # noqa: E402
from rigcheck.facts.kernel_log import unexplained  # noqa: E402
from rigcheck.facts.kernel_log.xid_catalog import NOT_FAILED, judge  # noqa: E402
from rigcheck.spec import load_spec  # noqa: E402
from rigcheck.testing.synthetic import synthetic_snapshot  # noqa: E402

CORPUS = json.loads((ROOT / "fixtures" / "realworld" / "kernel_log.json").read_text())
DRIVERS = ("nvidia", "amdgpu", "mlx5")  # mlx5: ConnectX NICs, judged on an NVIDIA node
ITEMS = [(vendor, item) for vendor in DRIVERS for item in CORPUS[vendor]]
suite = importlib.import_module("suites.facts.test_kernel_log")
UNSEEN = "unexplained"  # an error line no rule reads: the suite warns (fails in acceptance)


def _lines(item: dict) -> list[str]:
    return [line for line, _ in item["lines"]]


def xid_events(lines: list[str]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, e) for i, e in enumerate(map(kernel_log.parse_xid, lines)) if e is not None]


def _placed(events: list[dict[str, Any]], lines: list[str], where) -> list[tuple[int, dict]]:
    """Each event with the index of the line it was read from (in order, so repeats pair up)."""
    placed, start = [], 0
    for event in events:
        i = next(j for j in range(start, len(lines)) if where(event, lines[j]))
        placed.append((i, event))
        start = i + 1
    return placed


def nvrm_events(lines: list[str]) -> list[tuple[int, dict[str, Any]]]:
    def first(event: dict[str, Any], line: str) -> bool:  # an SXid's text starts at its switch
        return event["text"].startswith(nvrm_log._message(line)) or event["text"][:60] in line

    return _placed(nvrm_log.parse_nvrm(lines), lines, first)


def amdgpu_events(lines: list[str]) -> list[tuple[int, dict[str, Any]]]:
    return _placed(amdgpu_log.parse_amdgpu_lines(lines), lines, lambda e, line: e["text"] in line)


def mlx5_events(lines: list[str]) -> list[tuple[int, dict[str, Any]]]:
    return _placed(mlx5_log.parse_mlx5_lines(lines), lines, lambda e, line: e["text"] in line)


def judged(raw: list[str]) -> dict[int, dict[str, Any]]:
    """Line index -> {event, gpu, cause}: every event the probe reads, judged as the suite does
    (an error line no rule explains: cause "unexplained", which the suite warns about)."""
    levels, lines = kernel_log.levels_and_lines(raw)
    found = {}
    for i, e in xid_events(lines):
        cause = judge(e["code"], e["text"]).cause
        found[i] = {"event": f"Xid {e['code']}", "gpu": e["bus_id"], "cause": cause}
    for i, e in nvrm_events(lines):
        cause = nvrm_log.judge_event(e["kind"], e["text"]).cause
        name = f"SXid {e['code']}" if e["kind"] == nvrm_log.SXID else f"NVRM {e['kind']}"
        found[i] = {"event": name, "gpu": e["bus_id"], "cause": cause}
    for i, e in amdgpu_events(lines):
        kind = amdgpu_log.judge(e["text"], e.get("context"))
        found[i] = {"event": f"amdgpu {kind.name}", "gpu": e["bus_id"], "cause": kind.cause}
    for i, e in mlx5_events(lines):
        cause = mlx5_log.find(e["kind"]).cause
        found[i] = {"event": f"mlx5 {e['kind']}", "gpu": e["bus_id"], "cause": cause}
    for e in unexplained.unexplained_errors(levels, lines):
        i = next(j for j, line in enumerate(lines) if e["text"] in line and j not in found)
        found[i] = {"event": f"unexplained {e['driver']}", "gpu": e["bus_id"], "cause": UNSEEN}
    return found


@pytest.mark.parametrize(("vendor", "item"), ITEMS, ids=[i["source"][19:] for _, i in ITEMS])
def test_each_line_is_read_and_judged_as_its_source_says(vendor, item):
    found = judged(_lines(item))
    wanted = {i: expect for i, (_, expect) in enumerate(item["lines"]) if expect}
    assert found == wanted


def _node(vendor: str, lines: list[str]) -> tuple[Any, Facts]:
    """A synthetic 8-GPU node whose kernel log is this excerpt, as the probe would record it."""
    spec = load_spec("mi300x" if vendor == "amdgpu" else "h100")
    facts = Facts(synthetic_snapshot(spec))
    log = facts.data["kernel_log"]
    levels, lines = kernel_log.levels_and_lines(lines)
    log["unexplained_events"] = unexplained.unexplained_errors(levels, lines)
    log["unexplained_count"] = len(log["unexplained_events"])
    log["xid_events"] = [e for _, e in xid_events(lines)]
    log["nvrm_events"] = [e for _, e in nvrm_events(lines)]
    log["amdgpu_events"] = [e for _, e in amdgpu_events(lines)]
    log["mlx5_events"] = [e for _, e in mlx5_events(lines)]
    return spec, facts


CHECKS = {  # the check that judges each driver's events, and how it names a line's device
    "nvidia": (lambda s, f: suite.test_no_machine_fault_xids(s, f, f.devices), "a GPU"),
    "amdgpu": (lambda s, f: suite.test_no_amdgpu_faults(s, f, f.devices), "a GPU"),
    "mlx5": (suite.test_no_nic_faults, "a NIC"),
}


@pytest.mark.parametrize(("vendor", "item"), ITEMS, ids=[i["source"][19:] for _, i in ITEMS])
def test_the_check_fails_the_node_exactly_when_the_excerpt_holds_a_fault(vendor, item):
    spec, facts = _node(vendor, _lines(item))
    check, device = CHECKS[vendor]
    outcome, message, _ = call(check, spec, facts)
    faults = [e for _, e in item["lines"] if e and e["cause"] not in {*NOT_FAILED, UNSEEN}]
    assert outcome == ("failed" if faults else "passed"), message
    for fault in faults:  # each names its device, or the line itself where the log names none
        assert (fault["gpu"] or f"{device} the line does not name") in message


def test_the_corpus_holds_over_a_hundred_real_lines_each_with_its_public_source():
    assert sum(len(item["lines"]) for _, item in ITEMS) >= 100
    assert all(item["source"].startswith("https://") for _, item in ITEMS)


def table() -> list[tuple[str, int, int]]:
    """(kind, lines, lines judged right) over the whole corpus."""
    count, right = Counter(), Counter()
    for _, item in ITEMS:
        found = judged(_lines(item))
        for i, (_, expect) in enumerate(item["lines"]):
            kind = expect["event"].split()[0] + " events" if expect else "lines that are no event"
            count[kind] += 1
            right[kind] += found.get(i) == expect
    return [(kind, count[kind], right[kind]) for kind in sorted(count)]


if __name__ == "__main__":
    print("| kind | lines | judged right |\n|---|---|---|")
    for kind, n, ok in table():
        print(f"| {kind} | {n} | {ok} |")
