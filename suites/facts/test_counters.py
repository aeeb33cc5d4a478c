"""Error counters: PCIe replays and AER, NVLink errors, NVSwitch fabric, ECC and memory repair."""

import pytest

from rigcheck.facts.nvidia.features import FEATURES
from rigcheck.limits import health_limit, nvidia_counters, replay_interval_s
from rigcheck.replay_rate import too_fast
from rigcheck.require import device_value, expected, gpu_label

# A driver before the fabric call reads no fabric state (rigcheck/facts/nvidia/features.py)
BEFORE_FABRIC = "a driver before R{1}, which has no {0}".format(*FEATURES["fabric"])

pytestmark = pytest.mark.facts

AER_KEYS = ("correctable", "nonfatal", "fatal")
NVLINK_KEYS = ("replay", "recovery", "crc_flit", "crc_data")
ECC_CEILINGS = (  # (counters, health_limits key, what they count)
    (("dram_corrected_volatile", "dram_corrected_aggregate"), "ecc_dram_corrected_max",
     "DRAM corrected"),
    (("sram_corrected_volatile", "sram_corrected_aggregate"), "ecc_sram_corrected_max",
     "SRAM corrected"),
    (("sram_uncorrected_volatile", "sram_uncorrected_aggregate"), "ecc_sram_uncorrected_max",
     "SRAM uncorrected"),
)  # fmt: skip


@pytest.fixture
def gpus(spec, devices, request):
    nvidia_counters(spec, "error counters (PCIe, NVLink, ECC)", request.node.originalname)
    return devices


def test_pcie_replays_within_limit(spec, gpus, facts):
    """A count within the class's pcie_replays_max passes at any uptime (the allowance DCGM's
    pcie diagnostic gives one run); above it the rate since boot is judged as DCGM's health
    watch judges it (rigcheck/replay_rate.py), so a long uptime is not a fault."""
    allowance = health_limit(spec, "pcie_replays_max")
    high = []
    for d in gpus:
        replays = device_value(d, "pcie_replays", required=True)
        if replays <= allowance:
            continue
        link = [device_value(d, f"pcie.{k}", required=True) for k in ("gen_max", "width_current")]
        found = too_fast(replays, replay_interval_s(facts), *link)
        if found:
            high.append(f"{gpu_label(d)}: {found}")
    assert not high, (
        f"PCIe replays above {allowance:.0f} and faster than the PCIe bit-error rate (1e-12) "
        f"allows since boot: {'; '.join(high)}. Each replay is a packet the link had to resend: "
        "a marginal riser, cable or slot at this link speed. Reseat the card and its riser; if "
        "the count keeps rising, ask the provider to service the slot (or RMA the GPU)."
    )


def test_pcie_aer_within_limits(spec, gpus):
    correctable_max = health_limit(spec, "pcie_aer_correctable_max")
    uncorrectable_max = health_limit(spec, "pcie_aer_uncorrectable_max")
    counted = [d for d in gpus if device_value(d, "pcie_aer") is not None]
    if not counted:
        pytest.skip("no AER statistics in sysfs (kernel before 4.19, AER off, or a VM)")
    bad = []
    for d in counted:
        n = {k: device_value(d, f"pcie_aer.{k}") for k in AER_KEYS}
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


def _link_errors(d, i, crc_max, replay_max, recovery_max) -> list[str]:
    """What is over the limits on one link; a counter this GPU does not keep (null) is skipped."""
    n = {k: device_value(d, f"nvlink_errors.{i}.{k}") for k in NVLINK_KEYS}
    label = f"{gpu_label(d)} link {device_value(d, f'nvlink_errors.{i}.link')}"
    crc = (n["crc_flit"] or 0) + (n["crc_data"] or 0)  # None: not counted, nothing to add
    bad = []
    if crc > crc_max or (n["replay"] or 0) > replay_max:
        bad.append(f"{label}: {crc} CRC, {n['replay']} replay")
    if (n["recovery"] or 0) > recovery_max:
        bad.append(f"{label}: {n['recovery']} recoveries")
    return bad


def test_nvlink_error_counters(spec, gpus, expected_gpus):
    _nvlink_class(spec, expected_gpus)
    limits = [
        health_limit(spec, key)
        for key in (
            "nvlink_crc_errors_max",
            "nvlink_replay_errors_max",
            "nvlink_recovery_errors_max",
        )
    ]
    bad = []
    for d in gpus:
        links = device_value(d, "nvlink_errors", required=True)
        for i in range(len(links)):
            bad += _link_errors(d, i, *limits)
    assert not bad, (
        "NVLink errors above the limits (CRC {:.0f}, replay {:.0f}, recovery {:.0f}): ".format(
            *limits
        )
        + f"{'; '.join(bad)}. CRC errors and replays are flits resent on a marginal link, "
        "recoveries are the link retraining: collectives slow down or hang. `nvidia-smi nvlink "
        "-e` shows them; reset the GPUs, and if they recur ask the provider to service the "
        "baseboard or NVSwitch tray."
    )


def test_nvswitch_fabric_registered(spec, gpus, expected_gpus):
    _nvlink_class(spec, expected_gpus)
    judged = [
        (d, device_value(d, "fabric.state"), device_value(d, "fabric.status"))
        for d in gpus
        if device_value(d, "fabric") is not None  # before Hopper: NVML NotSupported
    ]
    judged = [(d, state, status) for d, state, status in judged if state != "not_supported"]
    if not judged:
        pytest.skip(
            "no GPU reports an NVSwitch fabric state "
            f"(before Hopper, no NVSwitch, or {BEFORE_FABRIC})"
        )
    bad = [
        f"{gpu_label(d)}: state {state}, status {status}"
        for d, state, status in judged
        if state != "completed" or status != 0
    ]
    assert not bad, (
        f"GPUs not registered with the NVSwitch fabric: {'; '.join(bad)}. Until the fabric "
        "manager finishes, CUDA cannot use NVLink between these GPUs. Check `systemctl status "
        "nvidia-fabricmanager` (its version must match the driver's) and restart it; if it "
        "fails, ask the provider."
    )


def test_ecc_counts_within_ceilings(spec, gpus):
    expected(spec, "ecc")
    ceilings = [(names, health_limit(spec, key), what) for names, key, what in ECC_CEILINGS]
    bad = []
    for d in gpus:
        if device_value(d, "ecc_by_location") is None:
            continue  # before Ampere NVML does not split DRAM and SRAM: totals are judged elsewhere
        for names, ceiling, what in ceilings:
            worst = max(device_value(d, f"ecc_by_location.{k}") for k in names)
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
    for d in gpus:
        if device_value(d, "remapped_rows") is None:
            continue  # before Ampere: pages are retired instead (test_retired_pages_below_limit)
        rows = device_value(d, "remapped_rows.uncorrectable")
        if rows > ceiling:
            bad.append(f"{gpu_label(d)}: {rows} rows remapped (uncorrectable)")
    assert not bad, (
        f"remapped rows above {ceiling:.0f}: {'; '.join(bad)}. The spare rows are running out; "
        "the next uncorrectable error cannot be repaired. Ask the provider to replace the GPU."
    )


def test_retired_pages_below_limit(spec, gpus):
    expected(spec, "ecc")
    limit = health_limit(spec, "retired_pages_max")
    bad = []
    for d in gpus:
        if device_value(d, "retired_pages") is None:
            continue  # Ampere and later remap rows instead (test_remapped_rows_below_ceiling)
        total = device_value(d, "retired_pages.single_bit") + device_value(
            d, "retired_pages.double_bit"
        )
        if total >= limit:
            bad.append(f"{gpu_label(d)}: {total} pages retired")
    assert not bad, (
        f"retired-page table near full (limit {limit:.0f} of 64): {'; '.join(bad)}. When it is "
        "full, new ECC errors cannot be retired and crash jobs. Ask the provider to replace the "
        "GPU (RMA)."
    )
