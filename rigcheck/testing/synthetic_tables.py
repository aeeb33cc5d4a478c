"""The reference tables synthetic.py writes snapshots from: boards as their drivers report them,
Apple chips, software stacks of healthy images, and the servers around the boards.

Figures come from vendors' datasheets, DCGM's SKU table and the specs' sources; rows written by
hand say so. NEW_BOARDS (synthetic_boards.py) holds the classes issue 29 added.
"""

from __future__ import annotations

from dataclasses import dataclass

from rigcheck.testing.synthetic_boards import NEW_BOARDS

# Bus ids of an 8-GPU HGX board, as sysfs writes them; a single-GPU machine has the first.
BUS_IDS = [f"0000:{bus}:00.0" for bus in ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")]
# The four NVSwitches of an HGX baseboard, where an SXM GPU's NVLinks end.
NVSWITCH_BUS_IDS = ["0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"]
# DGX-1's hybrid cube-mesh of eight V100s: (GPU, GPU) -> NVLinks between them, six per GPU.
# Each quad is fully joined, and each GPU doubly to its twin in the other quad.
CUBE_MESH = {
    **{(a + q, b + q): n for q in (0, 4) for (a, b), n in {
        (0, 1): 1, (0, 2): 1, (0, 3): 2, (1, 2): 2, (1, 3): 1, (2, 3): 1}.items()},
    **{(i, i + 4): 2 for i in range(4)},
}  # fmt: skip
TORCH_RESERVED_MIB = 467  # cudaDeviceProp.totalGlobalMem is NVML's total less the driver's share
IDLE_USED_MIB = 531  # NVML's used memory on an idle GPU with persistence mode on


@dataclass(frozen=True)
class Board:
    """One accelerator as its driver reports it."""

    name: str  # NVML name (torch's name on ROCm)
    pci_device_id: str
    memory_mib: int  # NVML memory total (ROCm torch's total_memory on AMD)
    compute_capability: str  # major.minor as torch and NVML report it
    sm_count: int  # multi_processor_count (compute units on AMD)
    sm_max_mhz: int
    mem_max_mhz: int
    host: str  # a key of HOSTS: the kind of server this board is sold in
    stack: str  # a key of STACKS: the software a healthy image of it runs
    gcn_arch: str | None = None
    nvlink_fabric: str = "nvswitch"  # where the class has NVLink: "nvswitch" or "cube_mesh"
    pcie_p2p: bool = True  # GeForce drivers refuse P2P over PCIe (topo -p2p: GNS)


BOARDS = {
    "t4": Board("Tesla T4", "0x1EB8", 15360, "7.5", 40, 1590, 5001, "cloud_vm", "cu124"),
    "v100": Board(
        "Tesla V100-SXM2-32GB", "0x1DB5", 32768, "7.0", 80, 1530, 877, "xeon", "cu124",
        nvlink_fabric="cube_mesh",
    ),
    "rtx3090": Board(
        "NVIDIA GeForce RTX 3090", "0x2204", 24576, "8.6", 82, 2100, 9751, "desktop", "cu124",
        pcie_p2p=False,
    ),
    "rtx4090": Board(
        "NVIDIA GeForce RTX 4090", "0x2684", 24564, "8.9", 128, 3105, 10501, "desktop", "cu124",
        pcie_p2p=False,
    ),
    "l40s": Board("NVIDIA L40S", "0x26B9", 46068, "8.9", 142, 2520, 9001, "epyc", "cu124"),
    "a100_40gb": Board(
        "NVIDIA A100-SXM4-40GB", "0x20B0", 40960, "8.0", 108, 1410, 1215, "epyc", "cu124"
    ),
    "a100": Board(
        "NVIDIA A100-SXM4-80GB", "0x20B2", 81920, "8.0", 108, 1410, 1593, "epyc", "cu124"
    ),
    "a100_pcie": Board(
        "NVIDIA A100 80GB PCIe", "0x20B5", 81920, "8.0", 108, 1410, 1512, "epyc", "cu124"
    ),
    "h100": Board(
        "NVIDIA H100 80GB HBM3", "0x2330", 81559, "9.0", 132, 1980, 2619, "xeon", "cu124"
    ),
    "h100_pcie": Board(
        "NVIDIA H100 PCIe", "0x2331", 81559, "9.0", 114, 1755, 1593, "epyc", "cu124"
    ),
    "h200": Board("NVIDIA H200", "0x2335", 143771, "9.0", 132, 1980, 3201, "xeon", "cu124"),
    "b200": Board("NVIDIA B200", "0x2901", 183359, "10.0", 148, 1965, 3996, "xeon", "cu128"),
    "mi300x": Board(
        "AMD Instinct MI300X", "0x74A1", 196592, "9.4", 304, 2100, 1300, "epyc", "rocm62",
        gcn_arch="gfx942:sramecc+:xnack-",
    ),
    **{name: Board(*row[:9], **row[9]) for name, row in NEW_BOARDS.items()},
}  # fmt: skip


@dataclass(frozen=True)
class AppleChip:
    """An Apple silicon Mac as sysctl describes it."""

    name: str  # machdep.cpu.brand_string
    model: str  # hw.model
    memory_gib: int  # hw.memsize is a whole number of GiB
    cores: int


APPLE_CHIPS = {
    "m4pro": AppleChip("Apple M4 Pro", "Mac16,11", 48, 14),
    "m4max": AppleChip("Apple M4 Max", "Mac16,5", 128, 16),
}


@dataclass(frozen=True)
class Stack:
    """The software of a healthy image: torch's build, the driver, nvcc, flash-attn."""

    torch: str
    build: str
    cuda: str | None = None
    hip: str | None = None
    cudnn: int | None = None  # torch.backends.cudnn.version() (MIOpen's on ROCm)
    nccl: str | None = None  # RCCL's on ROCm
    driver: str | None = None
    driver_cuda: str | None = None
    arch_list: tuple[str, ...] = ()
    flash_attn: str | None = None


STACKS = {
    "cu124": Stack(
        "2.5.1+cu124", "cuda", cuda="12.4", cudnn=90100, nccl="2.21.5",
        driver="550.127.05", driver_cuda="12.4",
        arch_list=("sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"),
        flash_attn="2.6.3",
    ),
    # Blackwell (sm_100) needs CUDA 12.8: torch's cu128 wheels and a 570 driver.
    "cu128": Stack(
        "2.7.1+cu128", "cuda", cuda="12.8", cudnn=90701, nccl="2.26.2",
        driver="570.148.08", driver_cuda="12.8",
        arch_list=("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"),
        flash_attn="2.7.4.post1",
    ),
    # Blackwell Ultra (sm_103) needs CUDA 12.9 or later: torch's cu130 wheels and a 580 driver
    # (written by hand from torch 2.9.1's release; no rigcheck run has recorded it).
    "cu130": Stack(
        "2.9.1+cu130", "cuda", cuda="13.0", cudnn=91300, nccl="2.27.7",
        driver="580.95.05", driver_cuda="13.0",
        arch_list=("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_110", "sm_120", "compute_120"),
        flash_attn="2.8.3",
    ),
    "rocm62": Stack(
        "2.5.1+rocm6.2", "rocm", hip="6.2.41133-dd7f95766", cudnn=3002000, nccl="2.20.5",
        arch_list=("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"),
        flash_attn="2.6.3",
    ),
    # gfx950 (MI355X) needs ROCm 7: written by hand from torch 2.8's ROCm 7.0 wheels.
    "rocm70": Stack(
        "2.8.0+rocm7.0", "rocm", hip="7.0.51831-a3e329ad8", cudnn=3005000, nccl="2.26.6",
        arch_list=("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1100"),
        flash_attn="2.8.3",
    ),
    "macos": Stack("2.5.1", "cpu"),  # macOS arm64 wheels carry no local version suffix
    "cpu": Stack("2.5.1+cpu", "cpu"),
}  # fmt: skip


@dataclass(frozen=True)
class Host:
    """The machine around the accelerators, as py-cpuinfo and psutil describe it."""

    cpu: str
    cores: tuple[int, int]  # physical, logical
    advertised_ghz: float
    max_mhz: int | None
    simd_flags: tuple[str, ...]
    ram_gib: int
    sockets: int = 1  # one NUMA node per socket
    virtualization: str = "none"
    machine: str = "x86_64"  # platform.machine(); py-cpuinfo's arch is its upper-case kin


X86 = ("avx", "avx2", "fma", "sse4_2")
AVX512 = ("avx512_bf16", "avx512_vnni", "avx512f")
HOSTS = {
    "xeon": Host(
        "Intel(R) Xeon(R) Platinum 8480+", (112, 224), 2.0, 3800,
        (*X86, *AVX512, "amx_bf16", "amx_tile"), 2015, sockets=2,
    ),
    "epyc": Host(
        "AMD EPYC 9654 96-Core Processor", (192, 384), 2.4, 3709, (*X86, *AVX512), 1511, sockets=2,
    ),
    "desktop": Host(
        "AMD Ryzen 9 7950X 16-Core Processor", (16, 32), 4.5, 5881, (*X86, *AVX512), 125
    ),
    # A Grace-Blackwell compute tray: two Grace CPUs (72 Arm Neoverse V2 cores each, LPDDR5X),
    # each joined to two GPUs by NVLink-C2C. Hand-written from NVIDIA's GB200 NVL72 description.
    "grace": Host(
        "Neoverse-V2", (144, 144), 3.4, 3447, ("asimd", "bf16", "i8mm", "sve", "sve2"), 884,
        sockets=2, machine="aarch64",
    ),
    "cloud_vm": Host(
        "Intel(R) Xeon(R) CPU @ 2.20GHz", (4, 8), 2.2, None, (*X86, "avx512_vnni", "avx512f"), 29,
        virtualization="kvm",
    ),
    "cpu": Host(
        "Intel(R) Core(TM) i7-1185G7 @ 3.00GHz", (4, 8), 3.0, 4800,
        (*X86, "avx512_vnni", "avx512f"), 31,
    ),
}  # fmt: skip


def bus_id(index: int) -> str:
    return BUS_IDS[index] if index < len(BUS_IDS) else f"0000:{0xE0 + index:02x}:00.0"


def cpu_capability(host: Host | None) -> str:
    """torch.backends.cpu.get_cpu_capability() on this host, ATEN_CPU_CAPABILITY unset, as
    compute_cpu_capability() in pytorch/pytorch aten/src/ATen/native/DispatchStub.cpp decides:
    x86 with AVX-512 (every synthetic x86 host: Sapphire Rapids, Zen 4, the Tiger Lake laptop,
    the cloud VM's Xeon) is AVX512; arm64 is SVE256 only with 256-bit SVE vectors and BF16, so
    DEFAULT on Grace's Neoverse V2 (128-bit SVE2) and on Apple silicon (no SVE; host None)."""
    if host is None or host.machine != "x86_64":
        return "DEFAULT"
    return "AVX512" if "avx512f" in host.simd_flags else "AVX2"
