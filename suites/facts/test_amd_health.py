"""AMD GPU health through amdsmi: ECC/RAS, retired pages, power cap, PCIe link, xGMI links,
firmware, and whether torch's ROCm can run on the host's kernel driver.

Facts from rigcheck/facts/amd/smi.py and rocm.py; what amd-smi shows by hand is named in each
message (`amd-smi metric --ecc`, `amd-smi bad-pages`, `amd-smi xgmi`...).
"""

import pytest

from rigcheck.facts.amd.rocm import MATRIX_SOURCE, driver_release, release_of, supported_user_space
from rigcheck.limits import health_limit, replay_interval_s
from rigcheck.replay_rate import too_fast
from rigcheck.require import device_value, expected, fact, gpu_label, shown

pytestmark = pytest.mark.facts


@pytest.fixture
def amd_gpus(spec, devices):
    if spec.vendor != "amd":
        pytest.skip(f"AMD health through amdsmi: {spec.name} is {spec.vendor}")
    return devices


def _block(d, name: str) -> tuple[int, dict] | None:
    """(index, entry) of one RAS block in the GPU's ras_blocks list."""
    blocks = device_value(d, "ras_blocks", required=True)
    for i in range(len(blocks)):
        if device_value(d, f"ras_blocks.{i}.block") == name:
            return i, blocks[i]
    return None


def test_amd_ecc_enabled(spec, amd_gpus):
    if not expected(spec, "ecc"):
        pytest.skip(f"{spec.name} is expected to run with ECC off")
    off = []
    for d in amd_gpus:
        umc = _block(d, "UMC")
        state = device_value(d, f"ras_blocks.{umc[0]}.state") if umc else "not listed"
        if state != "ENABLED":
            off.append(f"{gpu_label(d)}: UMC {state}")
    assert not off, (
        f"ECC on HBM is off: {'; '.join(off)}. UMC is the memory controller's RAS block; off, "
        "memory errors go uncorrected and uncounted. `amd-smi static --ras` shows it: the "
        "amdgpu driver enables it at load (amdgpu.ras_enable, on by default on Instinct); ask "
        "the provider why it is off."
    )


def _nonzero_blocks(d, keys: tuple[str, ...]) -> str:
    """'UMC 3, GFX 1': the blocks whose counts of these kinds are not zero, for messages."""
    named = []
    for i, entry in enumerate(device_value(d, "ras_blocks") or []):
        if device_value(d, f"ras_blocks.{i}.counts") is None:
            continue
        n = sum(device_value(d, f"ras_blocks.{i}.counts.{k}") for k in keys)
        if n:
            named.append(f"{entry['block']} {n}")
    return ", ".join(named) or "no block named"


def test_amd_no_uncorrectable_ecc_errors(spec, amd_gpus):
    expected(spec, "ecc")
    ceiling = health_limit(spec, "amd_ecc_uncorrectable_max")
    bad = []
    for d in amd_gpus:
        device_value(d, "ras", required=True)
        n = device_value(d, "ras.uncorrectable") + device_value(d, "ras.deferred")
        if n > ceiling:
            blocks = _nonzero_blocks(d, ("uncorrectable", "deferred"))
            bad.append(f"{gpu_label(d)}: {n} uncorrectable/deferred ({blocks})")
    assert not bad, (
        f"uncorrectable ECC errors since the driver loaded: {'; '.join(bad)}. Data in memory or "
        "on chip was lost (deferred: poisoned data consumed later); jobs on this GPU crash or "
        "compute wrong results. `amd-smi metric --ecc --ecc-blocks` shows them: drain the node, "
        "reset the GPU (`amd-smi reset -G`), and if they recur ask the provider for an RMA."
    )


def test_amd_corrected_ecc_within_ceiling(spec, amd_gpus):
    expected(spec, "ecc")
    ceiling = health_limit(spec, "amd_ecc_correctable_max")
    bad = []
    for d in amd_gpus:
        device_value(d, "ras", required=True)
        n = device_value(d, "ras.correctable")
        if n > ceiling:
            bad.append(f"{gpu_label(d)}: {n} ({_nonzero_blocks(d, ('correctable',))})")
    assert not bad, (
        f"correctable ECC errors above {ceiling:.0f}: {'; '.join(bad)}. HBM wearing out "
        "corrects more and more errors before it fails uncorrectably. `amd-smi metric --ecc` "
        "shows them; plan to drain the node and ask the provider to replace the GPU."
    )


def test_amd_bad_pages(spec, amd_gpus):
    """Retired HBM pages against the driver's own threshold; pending or unreservable pages."""
    expected(spec, "ecc")
    fraction = health_limit(spec, "amd_bad_pages_threshold_fraction_max")
    bad = []
    for d in amd_gpus:
        if device_value(d, "bad_pages") is None:
            continue  # NOT_SUPPORTED: an SR-IOV guest, where the host retires pages
        retired = device_value(d, "bad_pages.retired")
        pending = device_value(d, "bad_pages.pending")
        lost = device_value(d, "bad_pages.unreservable")
        threshold = device_value(d, "bad_pages.threshold")
        if pending:
            bad.append(f"{gpu_label(d)}: {pending} pages pending retirement (reset the GPU)")
        if lost:
            bad.append(f"{gpu_label(d)}: {lost} bad pages could not be retired (RMA)")
        if threshold and retired + lost >= fraction * threshold:
            bad.append(f"{gpu_label(d)}: {retired + lost} of {threshold} pages retired")
    assert not bad, (
        f"HBM pages retired for ECC errors: {'; '.join(bad)}. Pending pages are retired at the "
        "next GPU reset (`amd-smi reset -G`); at the driver's threshold it flags the GPU for "
        "replacement. `amd-smi bad-pages` lists them: ask the provider for an RMA near the "
        f"threshold ({fraction:.0%})."
    )


def test_amd_power_cap_not_capped(spec, amd_gpus):
    tdp = expected(spec, "tdp")
    margin = spec.data["expect"].get("power_limit_margin", 0.05)
    floor = tdp * (1 - margin)
    capped = []
    for d in amd_gpus:
        device_value(d, "power_cap", required=True)
        watts = device_value(d, "power_cap.cap_w")
        if watts < floor:
            capped.append(
                f"{gpu_label(d)}: {watts:.0f} W (default {shown(d, 'power_cap.default_w')} W)"
            )
    assert not capped, (
        f"power cap below {floor:.0f} W ({spec.name} board power {tdp} W less {margin:.0%}): "
        f"{'; '.join(capped)}. Throughput drops with it; `amd-smi static --limit` shows it. Ask "
        "the provider, or restore it (`amd-smi set --power-cap`)."
    )


def _pcie(spec) -> dict:
    link = spec.expect("pcie")
    if link is None:
        pytest.skip(f"{spec.name} has no PCIe link to check")
    return link


def test_amd_pcie_generation(spec, amd_gpus):
    """The device's fastest generation: an idle link may train down to save power."""
    want = _pcie(spec)["generation"]
    slow = []
    for d in amd_gpus:
        device_value(d, "pcie_link", required=True)
        gen = device_value(d, "pcie_link.gen_max")
        if gen < want:
            slow.append(
                f"{gpu_label(d)}: Gen{gen} max (now Gen{shown(d, 'pcie_link.gen_current')})"
            )
    assert not slow, (
        f"PCIe link below Gen{want}: {'; '.join(slow)}. A slot, riser or BIOS setting limits "
        "the link: host-device copies run at a fraction of their rate. `amd-smi static --bus` "
        "shows it; ask the provider to check the slot and BIOS."
    )


def test_amd_pcie_width(spec, amd_gpus):
    want = _pcie(spec)["width"]
    narrow = []
    for d in amd_gpus:
        device_value(d, "pcie_link", required=True)
        width = device_value(d, "pcie_link.width_current")
        if width < want:
            narrow.append(f"{gpu_label(d)}: x{width} (max x{shown(d, 'pcie_link.width_max')})")
    assert not narrow, (
        f"PCIe link narrower than x{want}: {'; '.join(narrow)}. A half-width link halves "
        "host-device bandwidth: reseat the card or check the slot and riser."
    )


def test_amd_pcie_replays_within_limit(spec, amd_gpus, facts):
    """As test_counters.py::test_pcie_replays_within_limit: above the class's allowance, the
    rate since boot against the PCIe bit-error rate (rigcheck/replay_rate.py)."""
    allowance = health_limit(spec, "pcie_replays_max")
    high = []
    for d in amd_gpus:
        device_value(d, "pcie_link", required=True)
        replays = device_value(d, "pcie_link.replays")
        if replays is None or replays <= allowance:  # None: amdsmi's "N/A", not counted
            continue
        link = [device_value(d, f"pcie_link.{k}") for k in ("gen_max", "width_current")]
        found = too_fast(replays, replay_interval_s(facts), *link)
        if found:
            high.append(f"{gpu_label(d)}: {found}")
    assert not high, (
        f"PCIe replays above {allowance:.0f} and faster than the PCIe bit-error rate (1e-12) "
        f"allows since boot: {'; '.join(high)}. Each replay is a packet the link had to resend: "
        "a marginal riser, cable or slot at this link speed. `amd-smi metric --pcie` shows "
        "them; reseat the card and riser, and if the count keeps rising ask the provider to "
        "service the slot."
    )


def test_amd_xgmi_links_up(spec, amd_gpus, expected_gpus):
    """Every GPU of a multi-GPU node has the class's xGMI links up, and no xGMI errors."""
    link = spec.expect("gpu_link")
    if link["type"] != "infinity_fabric":
        pytest.skip(f"{spec.name} has no xGMI links ({link['type']})")
    if expected_gpus < 2:
        pytest.skip("one GPU: no peer to link to (run with --gpus N on a multi-GPU node)")
    want = link["links_per_device"]
    bad = []
    for d in amd_gpus:
        device_value(d, "xgmi", required=True)
        up = device_value(d, "xgmi.up")
        status = device_value(d, "xgmi.error_status")
        if up < want:
            bad.append(f"{gpu_label(d)}: {up}/{want} xGMI links up")
        if status not in (None, "no_errors"):
            bad.append(f"{gpu_label(d)}: xGMI {status.replace('_', ' ')}")
    assert not bad, (
        f"xGMI (Infinity Fabric) links down or in error: {'; '.join(bad)}. RCCL collectives "
        "then route around the link or fall back to PCIe at a fraction of the bandwidth. "
        "`amd-smi xgmi` and `amd-smi metric --xgmi-err` show them: reset the GPUs, and if "
        "links stay down ask the provider to service the baseboard."
    )


def test_amd_firmware_identical_across_gpus(amd_gpus):
    versions = {}
    for d in amd_gpus:
        device_value(d, "amd_firmware", required=True)
        blocks = device_value(d, "amd_firmware.blocks")
        key = (device_value(d, "amd_firmware.vbios"), tuple(sorted(blocks.items())))
        versions.setdefault(key, []).append(gpu_label(d))
    first = set(next(iter(versions))[1]) if versions else set()
    groups = [
        f"VBIOS {vbios}"
        + "".join(f", {n} {v}" for n, v in blocks if (n, v) not in first)
        + f" on {', '.join(gpus)}"
        for (vbios, blocks), gpus in versions.items()
    ]
    assert len(versions) <= 1, (
        f"GPUs of this node run different firmware: {'; '.join(groups)}. Mixed firmware means "
        "a GPU was swapped without an update; RAS, xGMI and power fixes live in firmware "
        "(`amd-smi firmware` lists it). Ask the provider to flash them all to the same version."
    )


def test_torch_rocm_within_kernel_driver_window(spec, facts, amd_gpus):
    """torch's ROCm against the host's kernel driver, by AMD's support matrix (rocm.py)."""
    hip = fact(facts, "software.torch.hip_version")
    if hip is None:
        pytest.fail(
            f"torch {fact(facts, 'software.torch.version')} is not a ROCm build "
            "(torch.version.hip is None): install a ROCm wheel of torch on this AMD machine",
            pytrace=False,
        )
    fact(facts, "software.rocm")
    installed = fact(facts, "software.rocm.installed")
    kernel_driver = fact(facts, "software.rocm.kernel_driver")
    driver = driver_release(kernel_driver, installed)
    if driver is None:
        pytest.skip(
            "no ROCm release on the host (/opt/rocm/.info/version) and an amdgpu driver "
            f"({kernel_driver}) that names no release of its own: it cannot be placed in AMD's "
            "support matrix; `amd-smi version` names it"
        )
    torch_release, supported = release_of(hip), supported_user_space(driver)
    if supported is None:
        pytest.fail(
            f"cannot judge: the host's kernel driver (release {driver}: ROCm {installed}, amdgpu "
            f"{kernel_driver}) is not in AMD's support matrix as rigcheck holds it "
            f"(rigcheck/facts/amd/rocm.py SUPPORT_MATRIX, from {MATRIX_SOURCE}): look its row up "
            f"on "
            "that page and add it",
            pytrace=False,
        )
    assert torch_release in supported, (
        f"torch was built for ROCm {hip} ({torch_release}), the host's kernel driver is release "
        f"{driver} (ROCm {installed}, amdgpu {kernel_driver}): AMD supports that driver with "
        f"user space {', '.join(supported)} only ({MATRIX_SOURCE}). HIP kernels fail to load or "
        f"fault at run time. Install a torch wheel for one of those releases "
        f"(download.pytorch.org/whl/rocm{supported[-1]}), or ask the provider for a newer "
        "amdgpu driver."
    )
