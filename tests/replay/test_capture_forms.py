"""The partial capture readers on the corpus's own files (fixtures/nvidia_smi/partial): what each
form holds is written, what it does not print or cuts off is left out, never guessed."""

from __future__ import annotations

from rigcheck.testing.nvml_sim.capture_nvlink import is_nvlink_status, parse_nvlink_status
from rigcheck.testing.nvml_sim.capture_table import is_table, parse_table
from rigcheck.testing.nvml_sim.capture_text import read_capture
from rigcheck.testing.nvml_sim.corpus import CAPTURES

PARTIAL = CAPTURES / "partial"


def table(name: str):
    text = (PARTIAL / name).read_text()
    assert is_table(text) and not is_nvlink_status(text)
    return parse_table(text)


def test_the_narrow_r470_table_and_a_processes_table_cut_after_its_header():
    root = table("bottlerocket-core-kit-122-A10G-470.txt")
    (gpu,) = root.findall("gpu")
    assert root.findtext("driver_version") == "470.256.02"
    assert root.findtext("cuda_version") == "11.4"
    assert gpu.findtext("product_name") == "NVIDIA A10G"
    assert gpu.findtext("fb_memory_usage/total") == "22731 MiB"
    assert gpu.findtext("gpu_power_readings/current_power_limit") == "300.00 W"
    assert gpu.findtext("ecc_errors/volatile/total_uncorrectable") == "0"
    assert gpu.findtext("mig_mode/current_mig") == "N/A"
    assert gpu.find("processes") is None  # cut: not known to be whole


def test_the_r610_header_and_an_empty_process_list_from_a_container():
    assert table("sglang-27487-B200-R610.txt").findtext("driver_version") == "610.43.02"
    assert table("sglang-27487-B200-R610.txt").findtext("cuda_version") == "13.3"
    (gpu,) = table("tensorrtllm_backend-baichuan-H100PCIe.txt").findall("gpu")
    assert gpu.findtext("fb_memory_usage/used") == "34743 MiB"
    assert gpu.find("processes") is None  # no rows while 34,743 MiB are used: hidden, not none


def test_nvlink_status_and_a_q_excerpt():
    text = (PARTIAL / "gpud-nvlink-status-A100x8.txt").read_text()
    gpus = parse_nvlink_status(text).findall("gpu")
    assert len(gpus) == 8 and all(len(g.findall("nvlink_links/link")) == 12 for g in gpus)
    a10 = read_capture((PARTIAL / "gpud-535.129.03-A10.txt").read_text()).find("gpu")
    assert a10.findtext("remapped_rows/remapped_row_unc") == "4"
    assert a10.findtext("remapped_rows/remapped_row_pending") == "Yes"


def test_r535_nests_a_process_under_its_process_id():
    root = read_capture((CAPTURES / "gpud-535.183.01-H100x8.txt").read_text())
    (proc,) = root.findall("gpu")[2].findall("processes/process_info")
    assert (proc.findtext("pid"), proc.findtext("type")) == ("1002127", "C")
    assert proc.findtext("used_memory") == "9212 MiB"
