"""What a glance at the current state misses: the next reboot's state, memory no listed
process holds, two GPUs with one identity, a multi-GPU node whose topology lists nothing."""

from itertools import combinations

import pytest

from rigcheck.limits import nvidia_counters
from rigcheck.require import device_fact, device_value, expected, fact, gpu_label

pytestmark = pytest.mark.facts
MIB = 2**20


@pytest.fixture
def nvidia_devices(spec, devices, request):
    """NVML facts; on AMD, limits.py says which have an amdsmi counterpart and which not."""
    nvidia_counters(spec, "pending states and memory use", request.node.originalname)
    return devices


def test_ecc_stays_on_after_reboot(spec, nvidia_devices):
    """ECC on now but off after the next reboot (`nvidia-smi -e 0` run, reboot pending)."""
    if not expected(spec, "ecc"):
        pytest.skip(f"{spec.name} is expected to run with ECC off")
    turning_off = [
        gpu_label(d)
        for d, on in device_fact(nvidia_devices, "ecc.current", required=True)
        if on is True and device_value(d, "ecc.pending", required=True) is False
    ]
    assert not turning_off, (
        f"ECC turns off at the next reboot on {', '.join(turning_off)} (on now, pending off): "
        "someone ran `nvidia-smi -e 0`. Undo it with `nvidia-smi -e 1` before the machine reboots."
    )


def test_mig_mode_after_reset(spec, nvidia_devices):
    """MIG mode changes take effect at the next GPU reset or reboot: pending shows that state."""
    want = spec.expected_value("mig")
    if want is None:
        pytest.skip(f"{spec.title} has no MIG")
    changing = [
        f"{gpu_label(d)}: {'on' if now else 'off'} now, {'on' if after else 'off'} after reset"
        for d, now in device_fact(nvidia_devices, "mig.current", required=True)
        if (after := device_value(d, "mig.pending", required=True)) is not now and after is not want
    ]
    assert not changing, (
        f"MIG turns {'off' if want else 'on'} at the next GPU reset or reboot: "
        f"{'; '.join(changing)}. Set it back with `nvidia-smi -mig {int(want)}` before then."
    )


def unlisted_allowance_mib(spec) -> float:
    """The class's allowance for memory NVML counts as used with no process listed."""
    entry = spec.data["expect"].get("unlisted_memory_allowance")
    if entry is None:
        pytest.fail(
            f"{spec.name}'s spec states no unlisted_memory_allowance (MiB): add one with its "
            "source to expected/{spec.name}.json",
            pytrace=False,
        )
    return entry["value"]


def test_memory_in_use_is_listed(spec, nvidia_devices):
    """NVML lists only the processes of its own PID namespace: a job in another container
    holds memory no process accounts for. The driver's own reservation is counted as used
    too, hence the class's allowance (expected/<class>.json, unlisted_memory_allowance)."""
    allowance = unlisted_allowance_mib(spec)
    hidden = []
    for d, total in device_fact(nvidia_devices, "memory_total_bytes", required=True):
        free = device_value(d, "memory_free_bytes", required=True)
        procs = device_value(d, "processes", required=True)
        held = [device_value(d, f"processes.{i}.used_bytes") for i in range(len(procs))]
        listed = sum(b for b in held if b is not None)
        unlisted = (total - free - listed) / MIB
        if unlisted > allowance:
            hidden.append(
                f"{gpu_label(d)}: {(total - free) / MIB:,.0f} MiB in use, {listed / MIB:,.0f} "
                f"MiB held by listed processes, {unlisted:,.0f} MiB held by no listed process"
            )
    assert not hidden, (
        f"GPU memory held by no listed process (allowance {allowance:,.0f} MiB for the "
        f"driver's reservation): {'; '.join(hidden)}. A process in another container or PID "
        "namespace holds it: `nvidia-smi` on the host shows it; stop it before measuring."
    )


IDENTITIES = {"nvidia": ["uuid", "pci.bus_id"], "amd": ["pci.bus_id"]}


def test_gpu_identities_unique(spec, devices):
    """Two GPUs with one UUID, serial or PCI address: one GPU listed twice, or a broken probe,
    and every per-GPU verdict is then about the wrong GPU."""
    keys = IDENTITIES.get(spec.vendor)
    if not keys:
        pytest.skip(f"{spec.title} has one device: nothing to tell apart")
    seen: dict[tuple[str, str], list[str]] = {}
    for key in keys:
        for d, value in device_fact(devices, key, required=True):
            seen.setdefault((key, value), []).append(gpu_label(d))
    if spec.vendor == "nvidia":  # Not Supported on GeForce boards: judged where it is read
        for d, serial in device_fact(devices, "serial"):
            if serial is not None:
                seen.setdefault(("serial", serial), []).append(gpu_label(d))
    twice = [f"{key} {value} on {', '.join(gpus)}" for (key, value), gpus in seen.items()
             if len(gpus) > _allowed(spec, key)]  # fmt: skip
    assert not twice, (
        f"two GPUs report one identity: {'; '.join(twice)}. Compare `nvidia-smi -L` with "
        "`lspci | grep -i nvidia`: a GPU listed twice hides one that is missing."
    )


def _allowed(spec, key: str) -> int:
    """GPUs one value may name: NVML's serial is the board's, which GB200 and GB300 share
    between the two GPUs of a superchip (the class's gpus_per_board)."""
    board = spec.data["expect"].get("gpus_per_board")
    return board["value"] if board and key == "serial" else 1


def test_topology_lists_every_gpu(facts, nvidia_devices):
    """NVML's topology has every GPU and every pair of them: an empty one judges nothing,
    and the pair checks (suites/distributed/test_topology.py) would pass on it."""
    if len(nvidia_devices) < 2:
        pytest.skip("one GPU: no pairs to list")
    want = sorted(device_value(d, "index") for d in nvidia_devices)
    gpus = fact(facts, "topology.gpus")
    listed = sorted(fact(facts, f"topology.gpus.{i}.index") for i in range(len(gpus)))
    pairs = fact(facts, "topology.pairs")
    found = sorted(
        tuple(sorted(fact(facts, f"topology.pairs.{i}.gpus"))) for i in range(len(pairs))
    )
    missing = sorted(set(combinations(want, 2)) - set(found))
    gap = f", missing {missing[:4]}" if missing else ""
    assert listed == want and not missing, (
        f"NVML's topology lists GPUs {listed} and {len(found)} pairs for GPUs {want} "
        f"({len(want) * (len(want) - 1) // 2} pairs{gap}). "
        "Re-record the facts (`rigcheck facts -o FILE`); `nvidia-smi topo -m` shows what NVML sees."
    )
