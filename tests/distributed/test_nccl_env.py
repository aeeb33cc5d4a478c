"""NCCL's settings as NCCL reads them: environment over config files, NCCL_ALGO forms, NVLS,
NCCL_SOCKET_IFNAME matching, and the INFO log lines that say what NCCL found."""

from pathlib import Path

import pytest

from rigcheck.facts.fabric.nccl_env import (
    algo_allows_nvls,
    nccl_environment,
    nvls_state,
    parse_nccl_log,
    socket_ifname_matches,
)

LOG = """\
node:1:9 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
node:1:9 [0] NCCL INFO NVLS multicast support is available on dev 0
node:1:9 [0] NCCL INFO 32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels
"""


@pytest.mark.parametrize(
    ("value", "allowed"),
    [
        (None, True),
        ("Ring", False),
        ("Tree,Ring,NVLS", True),
        ("^NVLS", False),
        ("^Tree", True),
        ("nvlstree", True),
        ("allreduce:tree,ring;allgather:ring", False),
        ("allgather:ring", True),
        ("allreduce:^ring", True),
    ],
)
def test_nccl_algo_forms(value, allowed):
    assert algo_allows_nvls(value) is allowed


def test_environment_wins_over_the_user_file_over_etc(tmp_path):
    user = tmp_path / "nccl.conf"
    user.write_text("# tuned by ops\nNCCL_ALGO=Tree\nNCCL_PROTO = Simple\n")
    env = {"NCCL_CONF_FILE": str(user), "NCCL_ALGO": "Ring", "PATH": "/bin"}
    found = nccl_environment(env, tmp_path)
    assert found["effective"]["NCCL_ALGO"] == "Ring"
    assert found["effective"]["NCCL_PROTO"] == "Simple"
    assert found["conf_files"][str(user)] == {"NCCL_ALGO": "Tree", "NCCL_PROTO": "Simple"}
    assert "PATH" not in found["env"] and found["env"]["NCCL_ALGO"] == "Ring"


def test_missing_conf_files_are_skipped(tmp_path):
    found = nccl_environment({}, tmp_path / "nohome")
    assert str(tmp_path / "nohome" / ".nccl.conf") not in found["conf_files"]
    assert found["effective"]["NCCL_P2P_DISABLE"] is None


def test_the_info_log_says_version_and_nvls():
    assert parse_nccl_log(LOG) == {
        "version": "2.21.5+cuda12.4",
        "nvls_available": True,
        "nvls_channels": 16,
    }
    off = parse_nccl_log("x NCCL INFO NVLS multicast support is not available on dev 3\n")
    assert off["nvls_available"] is False
    assert parse_nccl_log("")["nvls_available"] is None


@pytest.mark.parametrize(
    ("effective", "log", "used", "why"),
    [
        ({}, parse_nccl_log(LOG), True, "16 NVLS channels"),
        ({"NCCL_NVLS_ENABLE": "0"}, parse_nccl_log(LOG), False, "NCCL_NVLS_ENABLE=0"),
        ({"NCCL_ALGO": "Ring"}, None, False, "NCCL_ALGO=Ring leaves NVLS out"),
        ({"NCCL_DEBUG": "WARN"}, None, None, "NCCL_DEBUG is set to 'WARN'"),
        ({}, {"nvls_available": False}, False, "not available"),
    ],
)
def test_nvls_state(effective, log, used, why):
    found_used, found_why = nvls_state("nccl", effective, log)
    assert found_used is used and why in found_why


@pytest.mark.parametrize(
    ("value", "chosen"),
    [
        ("eth0", ["eth0"]),
        ("eth", ["eth0", "eth1"]),
        ("=eth", []),
        ("^eth", ["ens5"]),
        ("^=eth0", ["eth1", "ens5"]),
        ("ib,ens", ["ens5"]),
        ("lo", ["lo"]),
    ],
)
def test_socket_ifname_follows_nccl_rules(value, chosen):
    assert socket_ifname_matches(value, ["eth0", "eth1", "ens5", "lo"]) == chosen


def test_unreadable_conf_file_is_recorded_not_raised(tmp_path):
    folder = tmp_path / "conf-is-a-dir"
    folder.mkdir()
    found = nccl_environment({"NCCL_CONF_FILE": str(folder)}, Path("/nonexistent"))
    assert "error" in found["conf_files"][str(folder)]
