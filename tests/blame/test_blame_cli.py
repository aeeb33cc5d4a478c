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


def node_facts(tmp_path, name, change=None):
    """An HGX H100's facts read through pynvml over the simulator, its profile changed first."""
    machine = copy.deepcopy(machine_profile("h100_hgx"))
    if change:
        change(machine)
    base = synthetic_snapshot(H100, gpus=len(machine["gpus"]))
    snapshot, lib = simulated_snapshot(base, machine, None, fake_sysfs(tmp_path / name, machine))
    assert not lib.crashes
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
