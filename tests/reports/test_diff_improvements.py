"""`rigcheck diff` exits 0 when nothing got worse: improvements alone are no failure."""

import copy
import json
from pathlib import Path

from rigcheck.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "certificates"
BEFORE = json.loads((FIXTURES / "h100-node-before.json").read_text())


def write(tmp_path, name, certificate) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(certificate))
    return str(path)


def with_figures_scaled(factor: float) -> dict:
    certificate = copy.deepcopy(BEFORE)
    for check in certificate["checks"]:
        for figure in check["figures"]:
            figure["measured"] *= factor
    return certificate


def test_only_faster_figures_exit_0(tmp_path, capsys):
    faster = write(tmp_path, "faster.json", with_figures_scaled(1.5))
    assert main(["diff", write(tmp_path, "a.json", BEFORE), faster]) == 0
    assert "improvements, nothing got worse" in capsys.readouterr().out


def test_slower_figures_exit_1(tmp_path):
    slower = write(tmp_path, "slower.json", with_figures_scaled(0.5))
    assert main(["diff", write(tmp_path, "a.json", BEFORE), slower]) == 1


def test_a_check_that_now_passes_is_an_improvement_and_one_that_now_fails_is_not(tmp_path):
    failing = copy.deepcopy(BEFORE)
    failing["checks"][0].update(outcome="fail", message="it failed")
    failing["verdict"] = "fail"
    a, b = write(tmp_path, "fail.json", failing), write(tmp_path, "pass.json", BEFORE)
    assert main(["diff", a, b]) == 0
    assert main(["diff", b, a]) == 1
