"""Error counters: PCIe replays and AER, NVLink errors, NVSwitch fabric, ECC and memory repair."""

import pytest

from rigcheck.limits import count, health_limit, nvidia_only, record
from rigcheck.require import device_values, expected, gpu_label

pytestmark = pytest.mark.facts

AER_KEYS = ("correctable", "nonfatal", "fatal")
NVLINK_KEYS = ("replay", "recovery", "crc_flit", "crc_data")
DRAM_CORRECTED = ("dram_corrected_volatile", "dram_corrected_aggregate")
SRAM_CORRECTED = ("sram_corrected_volatile", "sram_corrected_aggregate")
SRAM_UNCORRECTED = ("sram_uncorrected_volatile", "sram_uncorrected_aggregate")


@pytest.fixture
def gpus(spec, devices):
    nvidia_only(spec, "error counters (PCIe, NVLink, ECC)")
    return devices


def test_pcie_replays_within_limit(spec, gpus):
    limit = health_limit(spec, "pcie_replays_max")
    high = [
        f"{gpu_label(d)}: {n} replays"
        for d, n in device_values(gpus, "pcie_replays", required=True)
        if count(n, f"{gpu_label(d)} pcie_replays") > limit
    ]
    assert not high, (
        f"PCIe replays above {limit:.0f} since the driver loaded: {'; '.join(high)}. Each replay "
        "is a packet the link had to resend: a marginal riser, cable or slot at this link speed. "
        "Reseat the card and its riser; if the count keeps rising, ask the provider to service "
        "the slot (or RMA the GPU)."
    )


def test_pcie_aer_within_limits(spec, gpus):
    correctable_max = health_limit(spec, "pcie_aer_correctable_max")
    uncorrectable_max = health_limit(spec, "pcie_aer_uncorrectable_max")
    counted = [(d, a) for d, a in device_values(gpus, "pcie_aer") if a is not None]
    if not counted:
        pytest.skip("no AER statistics in sysfs (kernel before 4.19, AER off, or a VM)")
    bad = []
    for d, aer in counted:
        aer = record(aer, f"{gpu_label(d)} pcie_aer", AER_KEYS)
        n = {k: count(aer[k], f"{gpu_label(d)} pcie_aer.{k}") for k in AER_KEYS}
        if n["nonfatal"] + n["fatal"] > uncorrectable_max:
            bad.append(f"{gpu_label(d)}: {n['nonfatal']} non-fatal, {n['fatal']} fatal")
        if n["correctable"] > correctable_max:
            bad.append(f"{gpu_label(d)}: {n['correctable']} correctable (> {correctable_max:.0f})")
    assert not bad, (
        f"PCIe AER errors since boot: {'; '.join(bad)}. Uncorrectable errors lose or corrupt "
        "transactions; many correctable ones mean a marginal link. `lspci -vvv -s <bus>` shows "
        "the error bits; reseat the card and riser, and if they recur ask the provider to service "
        "the slot or replace the GPU."
    )


def _nvlink_class(spec, expected_gpus):
    link = spec.expect("gpu_link")
    if link["type"] != "nvlink":
        pytest.skip(f"{spec.name} has no NVLink ({link['type']})")
    if expected_gpus < 2:
        pytest.skip("one GPU: its NVLinks carry no traffic (run with --gpus N on a multi-GPU node)")


def test_nvlink_error_counters(spec, gpus, expected_gpus):
    _nvlink_class(spec, expected_gpus)
    crc_max = health_limit(spec, "nvlink_crc_errors_max")
    replay_max = health_limit(spec, "nvlink_replay_errors_max")
    recovery_max = health_limit(spec, "nvlink_recovery_errors_max")
    bad = []
    for d, links in device_values(gpus, "nvlink_errors", required=True):
        if not isinstance(links, list):
            pytest.fail(f"cannot check: {gpu_label(d)} nvlink_errors is {links!r}", pytrace=False)
        for link in links:
            link = record(link, f"{gpu_label(d)} an NVLink's counters", ("link", *NVLINK_KEYS))
            n = {
                k: count(link[k], f"{gpu_label(d)} link {link['link']} {k}")
                for k in NVLINK_KEYS
                if link[k] is not None  # not counted by this GPU (NVML: NotSupported)
            }
            crc = n.get("crc_flit", 0) + n.get("crc_data", 0)
            if crc > crc_max or n.get("replay", 0) > replay_max:
                label = f"{gpu_label(d)} link {link['link']}"
                bad.append(f"{label}: {crc} CRC, {n.get('replay')} replay")
            if n.get("recovery", 0) > recovery_max:
                bad.append(f"{gpu_label(d)} link {link['link']}: {n['recovery']} recoveries")
    assert not bad, (
        f"NVLink errors above the limits (CRC {crc_max:.0f}, replay {replay_max:.0f}, recovery "
        f"{recovery_max:.0f}): {'; '.join(bad)}. CRC errors and replays are flits resent on a "
        "marginal link, recoveries are the link retraining: collectives slow down or hang. "
        "`nvidia-smi nvlink -e` shows them; reset the GPUs, and if they recur ask the provider "
        "to service the baseboard or NVSwitch tray."
    )


def test_nvswitch_fabric_registered(spec, gpus, expected_gpus):
    _nvlink_class(spec, expected_gpus)
    states = [
        (d, record(f, f"{gpu_label(d)} fabric", ("state", "status")))
        for d, f in device_values(gpus, "fabric")
        if f is not None
    ]
    judged = [(d, f) for d, f in states if f["state"] != "not_supported"]
    if not judged:
        pytest.skip("no GPU reports an NVSwitch fabric state (before Hopper, or no NVSwitch)")
    bad = [
        f"{gpu_label(d)}: state {f['state']}, status {f['status']}"
        for d, f in judged
        if f["state"] != "completed" or f["status"] != 0
    ]
    assert not bad, (
        f"GPUs not registered with the NVSwitch fabric: {'; '.join(bad)}. Until the fabric "
        "manager finishes, CUDA cannot use NVLink between these GPUs. Check `systemctl status "
        "nvidia-fabricmanager` (its version must match the driver's) and restart it; if it "
        "fails, ask the provider."
    )


def test_ecc_counts_within_ceilings(spec, gpus):
    expected(spec, "ecc")
    dram_max = health_limit(spec, "ecc_dram_corrected_max")
    sram_max = health_limit(spec, "ecc_sram_corrected_max")
    sram_unc_max = health_limit(spec, "ecc_sram_uncorrected_max")
    keys = (*DRAM_CORRECTED, *SRAM_CORRECTED, *SRAM_UNCORRECTED)
    bad = []
    for d, ecc in device_values(gpus, "ecc_by_location"):
        if ecc is None:
            continue  # before Ampere NVML does not split DRAM and SRAM: totals are judged elsewhere
        ecc = record(ecc, f"{gpu_label(d)} ecc_by_location", keys)
        n = {k: count(ecc[k], f"{gpu_label(d)} {k}") for k in keys}
        for names, ceiling, what in (
            (DRAM_CORRECTED, dram_max, "DRAM corrected"),
            (SRAM_CORRECTED, sram_max, "SRAM corrected"),
            (SRAM_UNCORRECTED, sram_unc_max, "SRAM uncorrected"),
        ):
            worst = max(n[k] for k in names)
            if worst > ceiling:
                bad.append(f"{gpu_label(d)}: {worst} {what} (ceiling {ceiling:.0f})")
    assert not bad, (
        f"ECC error counts above their ceilings: {'; '.join(bad)}. Many corrected errors mean "
        "memory wearing out toward uncorrectable ones; an SRAM uncorrected error means on-chip "
        "memory failed. Drain the node and ask the provider to replace the GPU (RMA)."
    )


def test_remapped_rows_below_ceiling(spec, gpus):
    expected(spec, "ecc")
    ceiling = health_limit(spec, "remapped_rows_uncorrectable_max")
    bad = []
    for d, rows in device_values(gpus, "remapped_rows"):
        if rows is None:
            continue  # before Ampere: pages are retired instead (test_retired_pages_below_limit)
        rows = record(rows, f"{gpu_label(d)} remapped_rows", ("uncorrectable", "correctable"))
        if count(rows["uncorrectable"], f"{gpu_label(d)} remapped rows") > ceiling:
            bad.append(f"{gpu_label(d)}: {rows['uncorrectable']} rows remapped (uncorrectable)")
    assert not bad, (
        f"remapped rows above {ceiling:.0f}: {'; '.join(bad)}. The spare rows are running out; "
        "the next uncorrectable error cannot be repaired. Ask the provider to replace the GPU."
    )


def test_retired_pages_below_limit(spec, gpus):
    expected(spec, "ecc")
    limit = health_limit(spec, "retired_pages_max")
    bad = []
    for d, pages in device_values(gpus, "retired_pages"):
        if pages is None:
            continue  # Ampere and later remap rows instead (test_remapped_rows_below_ceiling)
        pages = record(pages, f"{gpu_label(d)} retired_pages", ("single_bit", "double_bit"))
        total = count(pages["single_bit"], "retired single-bit pages") + count(
            pages["double_bit"], "retired double-bit pages"
        )
        if total >= limit:
            bad.append(f"{gpu_label(d)}: {total} pages retired")
    assert not bad, (
        f"retired-page table near full (limit {limit:.0f} of 64): {'; '.join(bad)}. When it is "
        "full, new ECC errors cannot be retired and crash jobs. Ask the provider to replace the "
        "GPU (RMA)."
    )
