"""`rigcheck fit -o FILE` writes a plan that --plan reads; --plan also reads `fit --json`."""

import json

import pytest

from rigcheck.cli import main
from rigcheck.memory.plan import load_plan

FIT = ["fit", "--model", "gpt2", "--method", "lora", "--batch", "2", "--vram", "8GiB"]


def test_fit_output_is_a_plan_for_the_same_job(tmp_path, capsys):
    plan = tmp_path / "plan.json"
    assert main([*FIT, "-o", str(plan)]) == 0
    capsys.readouterr()
    assert main([*FIT, "--json"]) == 0
    fit_json = tmp_path / "fit.json"
    fit_json.write_text(capsys.readouterr().out)
    assert load_plan(plan).job == load_plan(fit_json).job
    assert load_plan(plan).job.batch == 2
    assert "command" not in json.loads(plan.read_text())


@pytest.mark.parametrize("where", ["missing/plan.json", "."])
def test_fit_output_that_cannot_be_written_is_one_line(tmp_path, capsys, where):
    assert main([*FIT, "-o", str(tmp_path / where)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "missing").exists()
