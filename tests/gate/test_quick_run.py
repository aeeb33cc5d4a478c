"""Reading the quick tier's child run back: a run killed at the timeout is never a pass, and a
run with no certificate changes no node state."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from rigcheck.cli import main
from rigcheck.gate.quick_run import QuickRun, new_run_dir, prune_runs, quick_command, read_back

CERTIFICATES = Path(__file__).resolve().parents[2] / "fixtures" / "certificates"


def run_dir_with(tmp_path: Path, name: str) -> Path:
    shutil.copyfile(CERTIFICATES / name, tmp_path / "certificate.json")
    return tmp_path


def test_a_finished_run_gives_its_certificates_root_cause(tmp_path):
    run = read_back(run_dir_with(tmp_path, "h100-node-after.json"), False, 50, "")
    assert run.root_cause == run.certificate["root_cause"]
    assert run.root_cause.startswith("driver_meets_class_minimum: ") and run.problem is None
    passed = read_back(run_dir_with(tmp_path, "h100-node-before.json"), False, 50, "")
    assert passed.root_cause is None


def test_a_killed_run_is_incomplete_unless_it_had_failed(tmp_path):
    passing_so_far = read_back(run_dir_with(tmp_path, "h100-node-before.json"), True, 50, "")
    assert passing_so_far.root_cause == (
        "incomplete: the quick tier did not end within 50 s (killed)"
    )
    failed = read_back(run_dir_with(tmp_path, "h100-node-after.json"), True, 50, "")
    assert failed.root_cause.startswith("driver_meets_class_minimum: ")


def test_no_certificate_is_no_verdict(tmp_path):
    run = read_back(tmp_path, False, 50, "ERROR: -m a1000: unknown class\n")
    assert run.certificate is None and run.root_cause is None
    assert "the run said: ERROR: -m a1000: unknown class" in run.problem


def test_a_run_killed_before_its_certificate_is_incomplete_not_no_verdict(tmp_path):
    # A probe stuck inside the driver (a GPU fallen off the bus) is what the hard kill is for.
    killed = read_back(tmp_path, True, 50, "")
    assert killed.certificate is None and killed.problem is None
    assert killed.root_cause.startswith(
        "incomplete: the quick tier did not end within 50 s and wrote no certificate"
    )


def test_health_drains_a_node_whose_quick_tier_was_killed(tmp_path, monkeypatch, capsys):
    from rigcheck.gate import slurm_cli
    from rigcheck.gate.slurm import NodeState

    killed = read_back(tmp_path / "run", True, 50, "")
    monkeypatch.setattr(slurm_cli, "run_quick_tier", lambda *args, **kw: killed)
    applied = []

    class FakeScontrol:
        def node(self, name):
            return NodeState(name, "idle", "none")

        def apply(self, node, action):
            applied.append((node, action.kind, action.reason))

    monkeypatch.setattr(slurm_cli, "Scontrol", FakeScontrol)
    code = main(["slurm", "health", "h100", "--dir", str(tmp_path), "--node", "n1"])
    assert code == 1
    assert applied == [("n1", "drain", "rigcheck: " + killed.root_cause)]
    assert "verdict incomplete: drained: rigcheck: incomplete:" in capsys.readouterr().err


def test_the_quick_tier_command_is_an_argument_list():
    command = quick_command(Path("/r/x"), "h100", "/f.json")
    assert command == [sys.executable, "-m", "rigcheck", "check", "--tier", "quick", "h100",
                       "--report-dir=/r/x", "-q", "--facts=/f.json"]  # fmt: skip
    assert "h100" not in quick_command(Path("/r/x"), None, None)
    busy = quick_command(Path("/r/x"), "h100", None, busy=True)
    assert busy[-1] == "--busy-node" and "--busy-node" not in command
    slower = quick_command(Path("/r/x"), "h100", None, budget_s=25)
    assert slower[-1] == "--tier-budget=25" and not any("budget" in a for a in command)


def test_slurm_and_k8s_pass_the_tier_budget_to_the_quick_tier(tmp_path, monkeypatch):
    from rigcheck.gate import k8s_cli, slurm_cli

    asked = []
    none = QuickRun(None, None, "test: no verdict", tmp_path)
    for module in (slurm_cli, k8s_cli):
        monkeypatch.setattr(module, "run_quick_tier", lambda *a, **kw: asked.append(kw) or none)
    where = ["--dir", str(tmp_path), "--node", "n1"]
    main(["slurm", "health", "h100", *where, "--tier-budget", "25"])
    main(["k8s", "mark", "--offline", *where, "--tier-budget", "30"])
    main(["slurm", "prolog", "h100", *where])
    assert [kw["budget_s"] for kw in asked] == [25.0, 30.0, None]


def test_health_without_a_verdict_leaves_the_node_and_exits_2(tmp_path, capsys):
    # --timeout 600: what is judged, not how fast; at load 13 on 2 cores the quick tier's child
    # took over the default 50 s to start and was killed, a drain (exit 1) instead (issue 38).
    code = main(["slurm", "health", "no_such_class", "--dir", str(tmp_path), "--node", "n1",
                 "--timeout", "600"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "rigcheck slurm health: node n1: no verdict, node state not changed" in err
    assert "no verdict" in (tmp_path / "gate.log").read_text()


def test_a_prolog_without_a_verdict_exits_0_so_slurm_does_not_drain_the_node(tmp_path, capsys):
    # Slurm drains a node whose Prolog exits non-zero, with its own "Prolog error" reason.
    code = main(["slurm", "prolog", "no_such_class", "--dir", str(tmp_path), "--node", "n1",
                 "--timeout", "600"])  # fmt: skip
    assert code == 0
    assert "rigcheck slurm prolog: node n1: no verdict, node state not changed" in (
        capsys.readouterr().err
    )


def test_old_runs_of_a_kind_are_pruned_and_nothing_else(tmp_path):
    names = [f"health-2026112{d}T000000-{d}" for d in range(5)]
    for name in [*names, "prolog-20261120T000000-1", "my-notes", "health-latest"]:
        (tmp_path / name).mkdir()
    removed = prune_runs(tmp_path, "health", keep=2)
    assert sorted(p.name for p in removed) == names[:3]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([*names[3:], "prolog-20261120T000000-1", "my-notes", "health-latest"])
    assert prune_runs(tmp_path, "health", keep=2) == []
    assert prune_runs(tmp_path / "absent", "health") == []


def test_a_new_run_folder_is_named_so_that_pruning_finds_it(tmp_path):
    run = new_run_dir(tmp_path, "k8s")
    run.mkdir()
    assert prune_runs(tmp_path, "k8s", keep=0) == [run]


def test_k8s_marks_a_node_whose_quick_tier_was_killed_unhealthy(tmp_path, monkeypatch, capsys):
    from rigcheck.gate import k8s_cli

    killed = read_back(tmp_path / "run", True, 50, "")
    asked = []
    monkeypatch.setattr(k8s_cli, "run_quick_tier", lambda *a, **kw: asked.append(kw) or killed)
    code = main(["k8s", "mark", "--offline", "--node", "n1", "--dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert '"rigcheck.dev/verdict": "incomplete"' in out and '"NoSchedule"' in out
    assert '"rigcheck.dev/tier": "quick"' in out
    busy = main(["k8s", "mark", "--offline", "--node", "n1", "--dir", str(tmp_path), "--busy-node"])
    assert busy == 1 and [kw["busy"] for kw in asked] == [False, True]
    assert '"rigcheck.dev/tier": "quick-busy"' in capsys.readouterr().out  # a fault still taints
