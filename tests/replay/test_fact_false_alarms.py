"""False alarms of the fact checks: the healthy machine passes, the faulty one still fails."""

import copy
import json
from pathlib import Path

import pytest

from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

SNAPSHOTS = Path(__file__).resolve().parents[2] / "fixtures" / "snapshots"
H100 = json.loads((SNAPSHOTS / "h100.json").read_text())


def with_cuda(nvcc: str, torch_cuda: str) -> dict:
    snapshot = copy.deepcopy(H100)
    software = snapshot["software"]
    software["nvcc"]["version"] = nvcc
    software["torch"]["cuda_version"] = torch_cuda
    software["torch"]["version"] = f"2.7.1+cu{torch_cuda.replace('.', '')}"
    software["nvidia_driver"].update(version="570.133.20", cuda_driver_version="12.8")
    return snapshot


@pytest.mark.parametrize("torch_cuda", ["12.6", "12.8"])
def test_nvcc_minor_behind_torch_passes_with_a_warning(replay, torch_cuda):
    """torch's cpp_extension builds extensions across a CUDA minor mismatch (a warning)."""
    result = replay(with_cuda("12.4", torch_cuda), "-m", "h100 and facts")
    assert result.ret == pytest.ExitCode.OK, result.describe()
    assert "NvccMinorMismatch" in result.output and "a minor mismatch" in result.output


def test_nvcc_major_mismatch_still_fails(replay):
    """cpp_extension raises on a CUDA major mismatch: extensions do not build."""
    result = replay(with_cuda("11.8", "12.8"), "-m", "h100 and facts")
    assert set(result.failed) == {"test_nvcc_matches_torch_cuda"}, result.describe()
    assert "torch's cpp_extension refuses a CUDA major mismatch" in "".join(result.failed.values())


def test_gpus_are_labelled_by_nvml_index_and_cuda_index_with_their_bus(replay):
    """Under CUDA_VISIBLE_DEVICES torch's cuda:0 is not NVML's GPU 0: each message says which
    index it uses (GPU n = NVML's, cuda:n = torch's) and the PCI address that ties them."""
    snapshot = synthetic_snapshot(load_spec("h100"), gpus=8)
    torch_devices = snapshot["software"]["torch"]["devices"]
    # torch sees NVML's GPUs 4-7 only (CUDA_VISIBLE_DEVICES=4,5,6,7) and cuda:1's bf16 is wrong
    snapshot["software"]["torch"]["devices"] = torch_devices[4:]
    snapshot["software"]["torch"]["device_count"] = 4
    snapshot["smoke"]["bf16_matmul"] = snapshot["smoke"]["bf16_matmul"][4:]
    snapshot["smoke"]["fp8_matmul"] = snapshot["smoke"]["fp8_matmul"][4:]
    snapshot["smoke"]["bf16_matmul"][1]["ok"] = False
    snapshot["devices"][5]["power"]["limit_w"] = 400.0
    result = replay(snapshot, "-m", "h100 and facts", "--gpus", "8")
    bus_of_nvml_5 = snapshot["devices"][5]["pci"]["bus_id"]
    assert torch_devices[5]["pci_bus_id"] == bus_of_nvml_5
    assert f"cuda:1 ({bus_of_nvml_5})" in result.failed["test_bf16_matmul_runs"]
    assert f"GPU 5 ({bus_of_nvml_5})" in result.failed["test_power_limit_not_capped"]
