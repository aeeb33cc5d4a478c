"""Reading back a pytester run of the suites from its junit XML: the self-tests' one reader."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

# junit's tag for each kind of problem, and the outcome it means; a later one wins.
PROBLEM_TAGS = (("failure", "failed"), ("error", "error"), ("skipped", "skipped"))


@dataclass
class Case:
    outcome: str = "passed"
    message: str = ""  # the deciding problem's message and text
    problems: dict[str, str] = field(default_factory=dict)  # junit tag -> message and text
    properties: dict[str, str] = field(default_factory=dict)  # as junit stores them: text


def read_junit(path: Path) -> dict[str, Case]:
    """Each test case by name; empty when the run wrote no file (it stopped before)."""
    cases: dict[str, Case] = {}
    if not path.exists():
        return cases
    for node in ET.parse(path).getroot().iter("testcase"):
        case = cases[node.get("name")] = Case()
        for tag, outcome in PROBLEM_TAGS:
            for problem in node.findall(tag):
                text = f"{problem.get('message', '')}\n{problem.text or ''}"
                case.outcome, case.message, case.problems[tag] = outcome, text, text
        case.properties = {p.get("name"): p.get("value") for p in node.iter("property")}
    return cases


def outcomes_and_messages(cases: dict[str, Case]) -> tuple[dict[str, str], dict[str, str]]:
    """Each test's outcome, and the message of each that did not pass."""
    outcomes = {n: c.outcome for n, c in cases.items()}
    return outcomes, {n: c.message for n, c in cases.items() if c.problems}
