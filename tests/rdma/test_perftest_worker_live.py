"""The RDMA pair job's launch for real, without RDMA: torchrun on 127.0.0.1, gloo, 2 ranks
standing in for 2 nodes, each with one fake ACTIVE port in a fake /sys, and perftest's programs
replaced by scripts that print recorded real outputs (fixtures/rdma/perftest/). What runs for
real: the launch, the schedule, the server/client order and barriers, the argument lists, the
parsing of what the client printed, the files. No RDMA traffic: this machine has no RDMA device
(no /sys/class/infiniband, and no rdma_rxe for soft-RoCE)."""

import json
import sys
from pathlib import Path

import pytest

from rigcheck.distributed.launch import run_torchrun
from rigcheck.rdma.perftest_run import load_rdma_run

pytest.importorskip("torch", reason="the live checks need a torch (tox selftest has one)")
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "rdma" / "perftest"
STAND_IN = """#!{python}
# Stand-in for perftest's {name}: records its arguments, prints a recorded real output.
import sys
with open({calls!r}, "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
sys.stdout.write(open({output!r}).read())
"""


def fake_perftest(root: Path) -> Path:
    bindir = root / "bin"
    bindir.mkdir()
    for name, output in (("ib_write_bw", "ib_write_bw-dgx-spark-rocep1s0f0.txt"),
                         ("ib_read_lat", "ib_read_lat-text.txt")):  # fmt: skip
        script = bindir / name
        script.write_text(STAND_IN.format(python=sys.executable, name=name,
                                          calls=str(root / "calls.log"),
                                          output=str(FIXTURES / output)))  # fmt: skip
        script.chmod(0o755)
    return bindir


def fake_sysfs(root: Path) -> Path:
    port = root / "sys/class/infiniband/mlx5_0/ports/1"
    (port / "counters").mkdir(parents=True)
    (port / "state").write_text("4: ACTIVE\n")
    for name in ("symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors"):
        (port / "counters" / name).write_text("0\n")
    return root


def test_the_pair_job_runs_servers_and_clients_in_rounds_and_writes_the_run(tmp_path):
    run_dir = tmp_path / "rdma-run"
    argv = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
        "--monitor-interval=1", "-m", "rigcheck.rdma.perftest_worker",
        f"--report-dir={run_dir}", "--seconds=1", "--timeout-s=30",
        f"--perftest-dir={fake_perftest(tmp_path)}", f"--sysfs-root={fake_sysfs(tmp_path)}",
    ]  # fmt: skip
    launched = run_torchrun(argv, tmp_path, timeout_s=120)  # its log: tmp_path/torchrun.log
    assert launched["returncode"] == 0 and not launched["timed_out"], launched["log_tail"]

    run = load_rdma_run(run_dir)
    assert run.missing() == [] and len(run.pairs) == 1
    entry = run.pairs[(1, 0, 1, "mlx5_0:1")]
    assert entry["write_bw"]["bw_avg_gbps"] == 92.57 and entry["read_lat"]["p99_us"] == 2.45
    assert entry["counters"]["after"]["ports"]["mlx5_0/1"]["counters"]["link_downed"] == 0
    calls = (tmp_path / "calls.log").read_text().splitlines()
    host = json.loads((run_dir / "plan.json").read_text())["nodes"][0]["host"]
    assert sorted(calls) == sorted([
        "-d mlx5_0 -i 1 -s 8388608 -D 1 -F --report_gbits",  # the server, on node 0
        f"-d mlx5_0 -i 1 -s 8388608 -D 1 -F --report_gbits {host}",  # the client, on node 1
        "-d mlx5_0 -i 1 -F", f"-d mlx5_0 -i 1 -F {host}",
    ])  # fmt: skip
