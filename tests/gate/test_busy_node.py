"""`--tier quick --busy-node`: the quick tier on a node whose GPUs run other work (the
Kubernetes DaemonSet, docs/k8s). The idle-only readings and the kernels are reported as skips
whose reason starts "NOT JUDGED on a busy node", never as passes, and CUDA is hidden from the
run before the torch probe starts; every other fact check is judged as usual.

The busy snapshot is the synthetic h100 one (fixtures/snapshots) changed BY HAND the way a busy
node reads through a DaemonSet that hides CUDA: another pod's process and 30 GiB of memory no
listed process holds on GPU 0, a hot GPU at its power limit and slowed for heat, and the torch
probe seeing no GPU (so no smoke results). Without --busy-node the same snapshot fails: the
test can fail."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from suite_replays import SuiteRunner

from rigcheck.gate.busy import BUSY_UNJUDGED, NOT_JUDGED, hide_gpus, unjudged_reason
from rigcheck.plugin import gate as gate_plugin
from rigcheck.reports.certificate import load_certificate

REPO = Path(__file__).resolve().parents[2]
H100 = json.loads((REPO / "fixtures" / "snapshots" / "h100.json").read_text())
GIB = 2**30


def busy_snapshot(path: Path) -> Path:
    facts = copy.deepcopy(H100)
    gpu = facts["devices"][0]
    gpu["processes"] = [{"pid": 91234, "used_bytes": 20 * GIB}]  # another pod's rank
    gpu["memory_free_bytes"] = gpu["memory_total_bytes"] - 50 * GIB  # 30 GiB in no listed pid
    # Hot and at its power limit under load: not a fault there. SW power cap alone at the
    # default limit passes even at idle now (issue 35: the board's own budget), so the heat's
    # software slowdown is what the idle run fails on.
    gpu["throttle_reasons"] = ["sw_power_cap", "sw_thermal_slowdown"]
    gpu["power"]["draw_w"] = gpu["power"]["limit_w"] - 5
    gpu["temperature_c"] = gpu["temperature_thresholds"]["slowdown_c"] - 2
    facts["software"]["torch"].update(cuda_available=False, device_count=0)
    facts["smoke"].update(bf16_matmul=[], fp8_matmul=[])
    facts["smoke"]["flash_attn_forward"] = {"ran": False, "ok": None, "error": "no CUDA device"}
    path.write_text(json.dumps(facts))
    return path


def run_quick(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    snapshot = busy_snapshot(tmp_path / "busy.json")
    report = tmp_path / ("busy" if args else "idle")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-m", "h100",
         f"--facts={snapshot}", f"--report-dir={report}", "--tier", "quick", *args,
         "--tier-budget=600",  # what is judged, not how fast: a loaded host must not fail it
         str(REPO / "suites")],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return done, load_certificate(report)


def by_name(certificate: dict) -> dict[str, dict]:
    return {c["id"].split("::")[-1].split("[")[0]: c for c in certificate["checks"]}


def test_a_busy_node_passes_on_what_it_can_judge_and_says_what_it_did_not(tmp_path):
    idle, idle_cert = run_quick(tmp_path)
    assert idle.returncode == 1 and idle_cert["verdict"] == "fail", idle.stdout[-2000:]
    failed = {name for name, c in by_name(idle_cert).items() if c["outcome"] == "fail"}
    assert {"test_no_other_processes", "test_memory_in_use_is_listed",
            "test_no_throttle_at_idle", "test_idle_temperature_below_slowdown",
            "test_torch_sees_all_devices"} <= failed  # fmt: skip

    busy, cert = run_quick(tmp_path, "--busy-node")
    assert busy.returncode == 0 and cert["verdict"] == "pass", busy.stdout[-2000:]
    checks = by_name(cert)
    unjudged = {n for n, c in checks.items() if (c.get("message") or "").startswith(NOT_JUDGED)}
    assert failed <= unjudged  # what failed at idle is not judged, not passed
    assert {"test_bf16_matmul_runs", "test_fp8_matmul_runs"} <= unjudged  # 0 of 0 GPUs ran
    assert all(checks[n]["outcome"] == "skip" for n in unjudged)
    last = busy.stdout.strip().splitlines()[-1]  # the terminal's verdict line counts them apart
    assert f", {len(unjudged)} NOT JUDGED (busy node);" in last, last
    assert "NOT JUDGED" not in idle.stdout.strip().splitlines()[-1]
    assert checks["test_no_machine_fault_xids"]["outcome"] == "pass"  # still judged
    assert checks["test_ecc_counts_within_ceilings"]["outcome"] == "pass"


def test_busy_node_needs_the_quick_tier(pytester):
    # In this process (tests/suite_replays.py): the usage error is the plugin's, not the process's;
    # the runs above show the option through a real pytest process.
    runner = SuiteRunner(pytester)
    healthy = REPO / "fixtures" / "snapshots" / "h100.json"
    for args in ([], ["--tier", "standard"]):
        done = runner(
            REPO / "suites", "-m", "h100", *args, "--busy-node", inputs={"--facts": healthy}
        )
        assert done.ret == pytest.ExitCode.USAGE_ERROR, done.output[-2000:]
        assert "--busy-node goes with --tier quick" in done.result.stderr.str()


def test_every_unjudged_check_exists_in_the_suites():
    for key in BUSY_UNJUDGED:
        path, name = key.split("::")
        assert f"def {name}(" in (REPO / path).read_text(), f"{key} is gone: update busy.py"


@pytest.mark.parametrize(
    ("nodeid", "judged"),
    [
        ("suites/facts/test_health.py::test_no_other_processes", False),
        ("suites/facts/test_precision.py::test_fp8_matmul_runs[x]", False),
        ("rigcheck/suites/facts/test_health.py::test_no_other_processes", False),
        ("suites/facts/test_health.py::test_no_other_processes_x", True),
        ("suites/facts/my_test_health.py::test_no_other_processes", True),
        ("suites/facts/test_health.py::test_ecc_enabled", True),
    ],
)
def test_unjudged_checks_are_matched_by_their_node_id(nodeid, judged):
    reason = unjudged_reason(nodeid)
    assert (reason is None) is judged
    if reason is not None:
        assert reason.startswith(NOT_JUDGED + ": ") and "the idle run judges it" in reason


def test_the_gpus_are_hidden_from_cuda_and_hip_before_facts_are_read(monkeypatch):
    environ = {"CUDA_VISIBLE_DEVICES": "0,1", "PATH": "/bin"}
    hide_gpus(environ)
    assert environ == {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": "", "PATH": "/bin"}
    hook = gate_plugin.pytest_configure
    assert hook.pytest_impl["tryfirst"]  # before rigcheck.plugin's hooks collect the facts

    class Config:
        def __init__(self, **options):
            self.options, self.stash, self.option = options, {}, type("O", (), {})()

        def getoption(self, name, default=None):
            return self.options.get(name, default)

    from rigcheck.gate.tiers import QUICK

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setattr(gate_plugin, "Deadline", lambda *a: None)
    hook(Config(tier=QUICK, busy_node=True, tier_budget=None))
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "" and os.environ["HIP_VISIBLE_DEVICES"] == ""
