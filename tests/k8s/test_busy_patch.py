"""A busy node's run (`rigcheck k8s mark --busy-node`, the DaemonSet) judged less than the
idle Job's: its failure taints the node, its pass never clears a taint (issue 25, docs/k8s)."""

from __future__ import annotations

import datetime as dt

from rigcheck.gate.k8s import CHECKED, TAINT_KEY, VERDICT, node_patch

NOW = dt.datetime(2026, 11, 25, 18, 0, tzinfo=dt.timezone.utc)
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
OURS = {"key": TAINT_KEY, "value": "fp8_matmul_runs", "effect": "NoSchedule"}
CAUSE = "no_machine_fault_xids: GPU 0: Xid 79"


def test_a_busy_pass_keeps_the_idle_runs_taint_and_only_stamps_the_time():
    patch = node_patch("pass", None, "quick-busy", [GPU_TAINT, OURS], NOW, may_clear=False)
    assert patch == {"metadata": {"annotations": {CHECKED: "2026-11-25T18:00:00+00:00"}}}


def test_an_idle_pass_clears_it():
    patch = node_patch("pass", None, "quick", [GPU_TAINT, OURS], NOW, may_clear=True)
    assert patch["spec"]["taints"] == [GPU_TAINT]
    assert patch["metadata"]["labels"][VERDICT] == "pass"


def test_a_busy_pass_on_an_untainted_node_is_an_ordinary_pass():
    patch = node_patch("pass", None, "quick-busy", [GPU_TAINT], NOW, may_clear=False)
    assert patch == node_patch("pass", None, "quick-busy", [GPU_TAINT], NOW)
    assert patch["spec"]["taints"] == [GPU_TAINT]


def test_a_busy_failure_taints_like_any_failure():
    patch = node_patch("fail", CAUSE, "quick-busy", [GPU_TAINT, OURS], NOW, may_clear=False)
    assert patch == node_patch("fail", CAUSE, "quick-busy", [GPU_TAINT, OURS], NOW)
    assert patch["spec"]["taints"][-1] == {**OURS, "value": "no_machine_fault_xids"}


def test_busy_and_idle_runs_keep_their_own_folders_and_are_pruned_apart(tmp_path, monkeypatch):
    """Both parts write under one hostPath: the busy DaemonSet's 100 runs (every 10 minutes)
    must not prune away the idle CronJob's, whose pass is the one that clears the taint."""
    from rigcheck.cli import main
    from rigcheck.gate import k8s_cli
    from rigcheck.gate.quick_run import QuickRun, prune_runs

    made = []

    def fake_run(run_dir, *args, **kwargs):
        run_dir.mkdir(parents=True)
        made.append(run_dir.name)
        certificate = {"verdict": "pass", "root_cause": None, "run": {"args": []}}
        return QuickRun(certificate, None, None, run_dir)

    monkeypatch.setattr(k8s_cli, "run_quick_tier", fake_run)
    for busy in ([], ["--busy-node"]):
        argv = ["k8s", "mark", "h100", "--offline", "--node", "n1", "--dir", str(tmp_path)]
        assert main(argv + busy) == 0
    assert [name.split("-")[0] for name in made] == ["k8s", "k8sbusy"]
    assert prune_runs(tmp_path, "k8sbusy", keep=0) == [tmp_path / made[1]]
    assert (tmp_path / made[0]).is_dir()
