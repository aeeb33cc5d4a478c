"""A healthy 8-GPU MI300X node probed through each amdsmi release the AMD classes allow (the real
package, only libamd_smi simulated): what every release reads alike, and, each pinned with the
release that shows it, what rigcheck used to get wrong (a healthy node failing a check)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from amd_real import INVAL, RELEASES, healthy_node, probe, real_amdsmi

from rigcheck.facts.amd import smi as amd_smi
from rigcheck.facts.probe import is_error
from rigcheck.testing.amdsmi_sim import import_amdsmi, release_of
from rigcheck.testing.amdsmi_sim.from_facts import node_from_snapshot

SAME_IN_EVERY_RELEASE = ("ras", "power_cap", "amd_temperature", "processes")


def releases(before=None, since=None):
    """The RELEASES whose version is in [since, before)."""
    chosen = []
    for param in RELEASES:
        version = release_of(param.values[0])
        if (before is None or version < before) and (since is None or version >= since):
            chosen.append(param)
    return chosen


@pytest.mark.parametrize("release", RELEASES)
def test_a_healthy_node_reads_the_same_through_every_release(release, monkeypatch, tmp_path):
    node = healthy_node()
    devices, other = probe(node, release, monkeypatch, tmp_path)
    for got, want in zip(devices, node["devices"], strict=True):
        for key in SAME_IN_EVERY_RELEASE:
            assert got[key] == want[key], key
        assert {k: v for k, v in got["bad_pages"].items() if k != "threshold"} == {
            k: v for k, v in want["bad_pages"].items() if k != "threshold"
        }
        for block in got["ras_blocks"]:  # ROCm 6.0 walks fewer blocks (up to FUSE)
            assert block in want["ras_blocks"]
        assert got["pcie_link"]["gen_current"] == 5 and got["pcie_link"]["width_max"] == 16
    assert other["topology"]["pairs"] == node["topology"]["pairs"]
    assert other["rocm"]["amdsmi_lib"] == "24.6.2"  # tests/amd_real.py LIB_VERSION
    if not Path("/sys/module/amdgpu/version").exists():  # else the host's own driver
        assert other["rocm"]["kernel_driver"] == "6.8.5"  # amdsmi_get_gpu_driver_info


@pytest.mark.parametrize("release", releases(since=(6, 4)))
def test_from_rocm_6_4_every_fact_reads_back(release, monkeypatch, tmp_path):
    node = healthy_node()
    devices, _ = probe(node, release, monkeypatch, tmp_path)
    for got, want in zip(devices, node["devices"], strict=True):
        want = dict(want)
        if release_of(release) < (7, 0):  # no amdsmi_get_gpu_bad_page_threshold before 7.0
            want["bad_pages"] = {**want["bad_pages"], "threshold": None}
        assert got == want


# --- defects the real packages exposed, each with the releases that show it ----------------


@pytest.mark.parametrize("release", releases(since=(6, 4)))  # before: no xGMI link status
def test_mi300x_answering_inval_for_xgmi_errors_is_not_reported(release, monkeypatch, tmp_path):
    """MI300X's driver answers EINVAL for xgmi_error, amdsmi AMDSMI_STATUS_INVAL
    (ROCm/rocm-systems#11468). Was: an error record, and test_amd_xgmi_links_up failing every
    healthy MI300X node. Its xGMI errors are counted in the XGMI_WAFL RAS block instead."""
    node = healthy_node()
    module = real_amdsmi(node["devices"], node["topology"], path=release)
    module.failures[("amdsmi_gpu_xgmi_error_status", None)] = INVAL
    devices, _ = probe(node, release, monkeypatch, tmp_path, module=module)
    assert devices[0]["xgmi"]["error_status"] is None
    assert devices[0]["xgmi"]["up"] == 7


@pytest.mark.parametrize("release", releases(before=(6, 1, 2)))
def test_power_caps_in_watts_before_rocm_6_1_2_are_not_read_as_microwatts(
    release, monkeypatch, tmp_path
):
    """Was: 750 W read as 0.00075 W, and test_amd_power_cap_not_capped failing every GPU."""
    devices, _ = probe(healthy_node(), release, monkeypatch, tmp_path)
    assert devices[0]["power_cap"] == {"cap_w": 750.0, "default_w": 750.0, "max_w": 750.0}


@pytest.mark.parametrize("release", releases(before=(6, 1, 2)))
def test_no_bad_pages_as_a_sentence_is_no_bad_pages(release, monkeypatch, tmp_path):
    """Was: "No bad pages found." iterated as pages, a TypeError record, test_amd_bad_pages
    failing a healthy node."""
    devices, _ = probe(healthy_node(), release, monkeypatch, tmp_path)
    assert devices[0]["bad_pages"] == {"retired": 0, "pending": 0, "unreservable": 0,
                                       "threshold": None}  # fmt: skip


@pytest.mark.parametrize("release", releases(before=(7, 0)))
def test_no_bad_page_threshold_function_is_none_not_an_error(release, monkeypatch, tmp_path):
    """Was: AttributeError record for the threshold, and test_amd_bad_pages failing on every
    ROCm 6.x node. The threshold is then unknown (None), as where the device does not report it."""
    devices, _ = probe(healthy_node(), release, monkeypatch, tmp_path)
    assert devices[0]["bad_pages"]["threshold"] is None


@pytest.mark.parametrize("release", releases(before=(6, 1)))
def test_rocm_6_0_reads_the_pcie_link_through_its_own_functions(release, monkeypatch, tmp_path):
    """Was: AttributeError (no amdsmi_get_pcie_info in ROCm 6.0): every PCIe check failing."""
    devices, _ = probe(healthy_node(), release, monkeypatch, tmp_path)
    assert devices[0]["pcie_link"] == {
        "gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16, "replays": 0,
        "recoveries": None, "nak_sent": None, "nak_received": None,
    }  # fmt: skip


@pytest.mark.parametrize("release", releases(before=(6, 1)))
def test_rocm_6_0_process_handles_are_read_as_records(release, monkeypatch, tmp_path):
    """Was: a TypeError record for the process list whenever a process held a GPU."""
    node = healthy_node()
    node["devices"][0]["processes"] = [{"pid": 48213, "used_bytes": 2**33}]
    devices, _ = probe(node, release, monkeypatch, tmp_path)
    assert devices[0]["processes"] == [{"pid": 48213, "used_bytes": 2**33}]


@pytest.mark.parametrize("release", releases(before=(6, 4)))
def test_without_xgmi_link_status_the_links_are_read_from_the_topology(
    release, monkeypatch, tmp_path
):
    """Was: an error record ("amdsmi_get_gpu_xgmi_link_status ... ROCm 6.4"), so a healthy
    MI300X on ROCm 6.0-6.3 failed test_amd_xgmi_links_up. Now one link up per peer GPU that
    amdsmi_topo_get_link_type (in every release) reports one xGMI hop away."""
    node = healthy_node()
    devices, _ = probe(copy.deepcopy(node), release, monkeypatch, tmp_path)
    xgmi = devices[0]["xgmi"]
    assert {k: xgmi[k] for k in ("total_links", "up", "down", "disabled")} == {
        "total_links": 7, "up": 7, "down": 0, "disabled": None
    }  # fmt: skip
    assert xgmi["error_status"] == node["devices"][0]["xgmi"]["error_status"]
    assert xgmi["read_from"].startswith("amdsmi_topo_get_link_type")


@pytest.mark.parametrize("release", releases(before=(6, 4)))
@pytest.mark.parametrize("link", [{"type": "xgmi", "hops": 2}, {"type": "pcie", "hops": 1}])
def test_a_peer_not_one_xgmi_hop_away_is_a_link_down(release, link, monkeypatch, tmp_path):
    """Routed through another GPU, or over PCIe: GPU 0's link to GPU 4 did not come up."""
    node = healthy_node()
    next(p for p in node["topology"]["pairs"] if p["gpus"] == [0, 4])["link"] = link
    devices, _ = probe(copy.deepcopy(node), release, monkeypatch, tmp_path)
    assert [(d["xgmi"]["up"], d["xgmi"]["down"]) for d in devices] == [
        (6, 1), (7, 0), (7, 0), (7, 0), (6, 1), (7, 0), (7, 0), (7, 0)
    ]  # fmt: skip


@pytest.mark.parametrize("release", releases(before=(6, 2)))
def test_rocm_path_unset_says_to_set_it(release):
    """amdsmi of ROCm 6.0-6.1 reads os.environ["ROCM_PATH"] at import: KeyError without it."""
    node = healthy_node()

    def load():
        return real_amdsmi(node["devices"], node["topology"], path=release, rocm_path=None)

    _, library = amd_smi.probe_amd_health(["0000:18:00.0"], load)
    assert is_error(library) and "export ROCM_PATH=/opt/rocm" in library["error"]


def exported_by(release) -> set[str]:
    """The symbols a release's libamd_smi exports, as its own wrapper binds them."""
    wrapper = (release / "amdsmi" / "amdsmi_wrapper.py").read_text()
    return set(re.findall(r"_libraries\['libamd_smi\.so'\]\.(\w+)", wrapper))


@pytest.mark.parametrize("release", releases(before=(6, 4)))
def test_the_newest_package_over_an_older_library_says_to_install_the_hosts(release):
    """PyPI's amdsmi 7.0 on a ROCm 6.x host: its wrapper binds symbols the older library lacks,
    and the import fails (ctypes: undefined symbol). Was: advice to install amdsmi, which is
    what the user just did; now: install the one that ships with the host's ROCm."""
    node = healthy_node()

    def load():
        return import_amdsmi(node_from_snapshot(node), symbols=exported_by(release))

    _, library = amd_smi.probe_amd_health(["0000:18:00.0"], load)
    assert "undefined symbol" in library["error"]
    assert "ships with the host's ROCm" in library["error"]
