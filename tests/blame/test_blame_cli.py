"""`rigcheck blame JOB_DIR`: the suspect's node read through the real pynvml over the simulated
libnvidia-ml (rigcheck/testing/nvml_sim) with a fault injected into its profile; the answer's
line, exit code (docs/exit-codes.md) and certificate."""

import copy
import datetime as dt
import json
import os
import shutil
from pathlib import Path

import pytest

from rigcheck.cli import main
from rigcheck.reports.certificate import load_certificate
from rigcheck.spec import load_spec
from rigcheck.testing.nvml_sim import machine_profile
from rigcheck.testing.nvml_sim.snapshot import fake_sysfs, simulated_snapshot
from rigcheck.testing.synthetic import synthetic_snapshot

DATA = Path(__file__).with_name("data")
HW_SLOWDOWN = 0x8  # nvml.h nvmlClocksEventReasonHwSlowdown
H100 = load_spec("h100")


def node_facts(tmp_path, name, change=None, driver=None, at=None):
    """An HGX H100's facts read through pynvml over the simulator, its profile changed first;
    AT: when they were read (ISO time), as `rigcheck facts` stamps them."""
    machine = copy.deepcopy(machine_profile("h100_hgx"))
    if change:
        change(machine)
    base = synthetic_snapshot(H100, gpus=len(machine["gpus"]))
    snapshot, lib = simulated_snapshot(base, machine, driver, fake_sysfs(tmp_path / name, machine))
    assert not lib.crashes
    if at:
        snapshot["origin"]["collected_at"] = at
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(snapshot))
    return path


def job(tmp_path, which, gpu_of_rank=None):
    """A copy of a real job's records; GPU_OF_RANK: each rank's CUDA_VISIBLE_DEVICES."""
    folder = tmp_path / which
    shutil.copytree(DATA / which, folder)
    for path in (folder / "steps").iterdir():
        lines = path.read_text().splitlines()
        header = json.loads(lines[0])
        if gpu_of_rank is not None:
            header.update(cuda_visible_devices=gpu_of_rank, local_rank=0)
        path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return folder


def blame(capsys, *args):
    code = main(["blame", *map(str, args)])
    return code, capsys.readouterr()


def slowdown_on(index):
    def change(machine):
        machine["gpus"][index]["clock_event_reasons"] = HW_SLOWDOWN

    return change


def test_a_hung_rank_on_a_slowed_gpu_is_blamed_with_the_cause(tmp_path, capsys):
    folder = job(tmp_path, "hung_rank1_of_3", gpu_of_rank="3")
    facts = node_facts(tmp_path, "node01", slowdown_on(3))
    code, out = blame(capsys, folder, "--facts", facts)
    assert code == 1, out
    assert out.out.startswith(
        "rigcheck blame: hung rank 1 on node01 (GPU 3): clock_slowdown: GPU 3: hw_slowdown"
    )
    assert "rank(s) 0, 2 wait in collective #6 (gloo:all_reduce)" in out.out
    certificate = load_certificate(folder / "blame" / "node01" / "certificate.json")
    assert certificate["verdict"] == "fail" and certificate["exit_status"] == 1
    assert certificate["root_cause"].startswith("clock_slowdown: GPU 3: hw_slowdown")


def test_the_suspect_gpus_cause_comes_before_another_gpus(tmp_path, capsys):
    def two_faults(machine):
        slowdown_on(0)(machine)
        machine["gpus"][5]["pcie"]["width_current"] = 8

    folder = job(tmp_path, "slow_rank2_of_3", gpu_of_rank="5")
    code, out = blame(capsys, folder, "--facts", node_facts(tmp_path, "node02", two_faults))
    assert code == 1
    assert "node02 (GPU 5): pcie_link: GPU 5: PCIe link x8 of x16 (+1 more)" in out.out
    assert "rank 2's compute_s median" in out.out


def test_counters_grown_since_the_jobs_start_are_the_cause(tmp_path, capsys):
    def replays(machine):
        machine["gpus"][2]["pcie"]["replays"] += 4000

    folder = job(tmp_path, "slow_rank2_of_3", gpu_of_rank="2")
    start = node_facts(tmp_path, "start")
    code, out = blame(capsys, folder, "--facts", node_facts(tmp_path, "now", replays),
                      "--baseline", start)  # fmt: skip
    assert code == 1
    assert "pcie_link: GPU 2: 4000 PCIe replays since the job started" in out.out
    # Without the start's facts the same counts (the capture's own, since the driver loaded)
    # are not a cause: nothing shows they grew during the job.
    code, out = blame(capsys, folder, "--facts", node_facts(tmp_path, "now2", replays))
    assert code == 3, out


def test_an_xid_logged_during_the_job_is_a_gpu_fault_and_one_before_it_is_not(tmp_path, capsys):
    folder = job(tmp_path, "slow_rank2_of_3")
    facts = json.loads(node_facts(tmp_path, "node02").read_text())
    start = min(json.loads(p.read_text().splitlines()[0])["started_at"]
                for p in (folder / "steps").iterdir())  # fmt: skip
    collected = start + 600.0  # the facts read ten minutes after the job began
    facts["origin"]["collected_at"] = dt.datetime.fromtimestamp(
        collected, dt.timezone.utc
    ).isoformat()
    log = facts["kernel_log"]
    log["uptime_s"] = 86400.0
    booted = collected - log["uptime_s"]
    old, new = start - booted - 3600, start - booted + 1
    line = "NVRM: Xid (PCI:0000:53:00): 79, pid=0, GPU has fallen off the bus."
    log["xid_events"] = [{"t_s": old, "code": 79, "bus_id": "0000:53:00.0", "text": line}]
    log["xid_count"] = 1
    path = tmp_path / "with_old_xid.json"
    path.write_text(json.dumps(facts))
    assert blame(capsys, folder, "--facts", path)[0] == 3  # before the job: not its cause
    log["xid_events"].append({**log["xid_events"][0], "t_s": new})
    log["xid_count"] = 2
    path.write_text(json.dumps(facts))
    code, out = blame(capsys, folder, "--facts", path)
    assert code == 1 and "gpu_fault: 1 new Xid event(s) (Xid 79)" in out.out


def test_a_clean_node_is_not_blamed_and_the_job_is_pointed_at(tmp_path, capsys):
    folder = job(tmp_path, "slow_rank2_of_3", gpu_of_rank="2")
    code, out = blame(capsys, folder, "--facts", node_facts(tmp_path, "node02"))
    assert code == 3
    assert "slow rank 2 on node02 (GPU 2): node clean" in out.out
    assert "look at the job" in out.out
    certificate = load_certificate(folder / "blame" / "node02" / "certificate.json")
    assert certificate["verdict"] == "pass" and certificate["root_cause"] is None


def test_another_nodes_suspect_is_not_examined_here(tmp_path, capsys):
    code, out = blame(capsys, job(tmp_path, "hung_rank1_of_3"), "--node", "node00")
    assert code == 4
    assert "This is node00: run `rigcheck blame` on node01" in out.out


def test_a_job_without_a_slow_or_hung_rank_blames_nobody(tmp_path, capsys):
    folder = job(tmp_path, "slow_rank2_of_3")
    (folder / "steps" / "rank00002.steps.jsonl").unlink()
    code, out = blame(capsys, folder, "--node", "node00")
    assert code == 0 and out.out.startswith("rigcheck blame: no slow or hung rank")


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda d: None, "no such folder"),
        (lambda d: d.mkdir(), "holds none of steps/, flight_recorder/, ncclras/"),
        (lambda d: (d / "steps").mkdir(parents=True)
         or (d / "steps" / "rank00000.steps.jsonl").write_text('{"format": "rigcheck.steps"}\n'),
         "version None"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, make, said):
    folder = tmp_path / "job"
    make(folder)
    code, out = blame(capsys, folder)
    assert code == 2
    assert said in out.err and len(out.err.strip().splitlines()) == 1 and not out.out


def test_a_dump_older_than_the_last_step_is_a_pause_not_a_hang(tmp_path, capsys):
    """The steps went on after the dumps were written: the job got over that stall."""
    folder = job(tmp_path, "hung_rank1_of_3")
    last = max(json.loads(p.read_text().splitlines()[-1])["end"]
               for p in (folder / "steps").iterdir())  # fmt: skip
    for dump in (folder / "flight_recorder").iterdir():
        os.utime(dump, (last - 1, last - 1))
    code, out = blame(capsys, folder, "--node", "node00")
    assert code == 0 and "no slow or hung rank" in out.out


def test_a_rank_ras_cannot_reach_is_blamed_on_its_own_gpu(tmp_path, capsys):
    """NCCL's documented JSON answer: rank 1 (NVML GPU 1 of 172.16.64.245) unreachable."""
    folder = tmp_path / "job" / "ncclras"
    folder.mkdir(parents=True)
    shutil.copy(DATA / "ncclras" / "docs_2.29.1.json", folder / "20251219T130653.json")
    facts = node_facts(tmp_path, "ras", slowdown_on(1))
    code, out = blame(capsys, tmp_path / "job", "--facts", facts)
    assert code == 1, out
    assert out.out.startswith(
        "rigcheck blame: hung rank 1 on 172.16.64.245 (GPU 1): clock_slowdown"
    )
    assert "unreachable, missing from communicator 0xae94423cfbb2ef4a" in out.out


def held(seconds_by_reason):
    """GPU 3's clock-event counters (nvml.h names, without clocks_event_reason_), in seconds."""

    def change(machine):
        machine["gpus"][3]["clock_event_time_ns"] = {
            f"clocks_event_reason_{r}": int(s * 1e9) for r, s in seconds_by_reason.items()
        }

    return change


START, NOW = "2026-11-29T08:00:00+00:00", "2026-11-29T08:01:40+00:00"  # 100 s of job


def test_a_thermal_slowdowns_share_of_the_job_is_the_cause(tmp_path, capsys):
    """GPU 3 held by HW thermal slowdown 30 s of the job's 100 s, read through the simulated
    NVML field values (R580 numbering)."""
    folder = job(tmp_path, "hung_rank1_of_3", gpu_of_rank="3")
    start = node_facts(tmp_path, "start", at=START)
    now = node_facts(tmp_path, "now", held({"hw_therm_slowdown": 30, "sw_power_cap": 12}), at=NOW)
    code, out = blame(capsys, folder, "--facts", now, "--baseline", start)
    assert code == 1, out
    assert "clock_slowdown: GPU 3: clocks held down by hw_therm_slowdown 30% of the job's time" in (
        out.out
    )
    assert "GPU 3 clock-event time: hw_therm_slowdown 30%, sw_power_cap 12%" in out.out


def test_the_power_caps_share_is_said_not_blamed(tmp_path, capsys):
    folder = job(tmp_path, "hung_rank1_of_3", gpu_of_rank="3")
    start = node_facts(tmp_path, "start", at=START)
    now = node_facts(tmp_path, "now", held({"sw_power_cap": 40, "hw_therm_slowdown": 1}), at=NOW)
    code, out = blame(capsys, folder, "--facts", now, "--baseline", start)
    assert code == 3, out  # 1 % of thermal slowdown: under the 5 % a cause needs
    assert "node clean" in out.out
    assert "GPU 3 clock-event time: sw_power_cap 40%, hw_therm_slowdown 1%" in out.out


@pytest.mark.parametrize(
    ("driver", "said"),
    [
        ("R418", "GPU 3: its driver counts no clock-event time (NVML: not supported)"),
        ("R535", "GPU 3 clock-event time: sw_power_cap 40% of the job's time"),
    ],
)
def test_an_older_driver_says_what_it_does_not_count(tmp_path, capsys, driver, said):
    """R535 counts the power cap (field 74) but not the slowdowns (251-253: R575 on): a
    thermal slowdown there is not seen, and not guessed."""
    folder = job(tmp_path, "hung_rank1_of_3", gpu_of_rank="3")
    start = node_facts(tmp_path, "start", driver=driver, at=START)
    change = held({"sw_power_cap": 40, "hw_therm_slowdown": 30})
    now = node_facts(tmp_path, "now", change, driver=driver, at=NOW)
    code, out = blame(capsys, folder, "--facts", now, "--baseline", start)
    assert code == 3, out
    assert said in out.out


def history_runs():
    """tests/history's runs (the real certificate and store code), loaded by path."""
    import importlib.util

    path = Path(__file__).parents[1] / "history" / "history_runs.py"
    spec = importlib.util.spec_from_file_location("history_runs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_suspect_boards_failures_in_the_history_store_are_said(tmp_path, capsys):
    """node-17's earlier run failed an Xid check on GPU 1 (serial 1652923456782); that board now
    sits in node01 as GPU 3, the hung rank's GPU: its history is in the answer."""
    from rigcheck.history import store

    runs = history_runs()
    url = f"sqlite:///{tmp_path / 'history.db'}"
    engine = store.open_store(url)
    store.write_run(engine, *runs.node_run("node-17", "2026-11-02T10:00:00Z", xid_on_gpu1=True))
    engine.dispose()

    def moved_board(machine):
        machine["gpus"][3]["serial"] = runs.SERIALS[1]

    folder = job(tmp_path, "hung_rank1_of_3", gpu_of_rank="3")
    facts = node_facts(tmp_path, "node01", moved_board)
    code, out = blame(capsys, folder, "--facts", facts, "--history", url)
    assert code == 3, out  # its past is evidence, not a cause
    assert "history: GPU 3 (serial 1652923456782) was seen failing on node-17 on 2026-11-02" in (
        out.out
    )
    code, out = blame(capsys, job(tmp_path / "2", "hung_rank1_of_3", "2"), "--facts", facts,
                      "--history", url)  # fmt: skip
    assert "history: GPU 2's board never seen failing" in out.out
    missing = tmp_path / "none.db"
    code, out = blame(capsys, folder, "--facts", facts, "--history", f"sqlite:///{missing}")
    assert f"history: no store at {missing}" in out.out and not missing.exists()
