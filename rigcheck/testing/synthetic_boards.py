"""The boards issue 29 added (2026's rented GPUs), as rows of synthetic.py's Board table.

Each row: NVML name, PCI device id, NVML memory total (MiB; ROCm torch's total on AMD), compute
capability, SM count, max SM and memory clocks (MHz), host profile, software stack, and keyword
overrides. Names and PCI ids are NVIDIA's own (open-gpu-kernel-modules README, Compatible GPUs)
and the PCI ID repository's; memory totals are those the class's spec cites in healthy_totals.
SM counts and clocks are written by hand from the vendors' product pages: no rigcheck run has
read them from these boards.
"""

from __future__ import annotations

from typing import Any

NEW_BOARDS: dict[str, tuple[Any, ...]] = {
    "l4": ("NVIDIA L4", "0x27B8", 23034, "8.9", 58, 2040, 6251, "cloud_vm", "cu124", {}),
    "a10g": ("NVIDIA A10G", "0x2237", 23028, "8.6", 80, 1710, 6251, "cloud_vm", "cu124", {}),
    "rtx5090": (
        "NVIDIA GeForce RTX 5090", "0x2B85", 32607, "12.0", 170, 3090, 14001, "desktop", "cu128",
        {"pcie_p2p": False},
    ),
    "l40": ("NVIDIA L40", "0x26B5", 46068, "8.9", 142, 2490, 9001, "epyc", "cu124", {}),
    "h20": ("NVIDIA H20", "0x2329", 97871, "9.0", 78, 1980, 2619, "xeon", "cu124", {}),
    "b300": (
        "NVIDIA B300 SXM6 AC", "0x3182", 275040, "10.3", 148, 2032, 3996, "xeon", "cu130", {},
    ),
    "mi325x": (
        "AMD Instinct MI325X", "0x74A5", 262128, "9.4", 304, 2100, 1300, "epyc", "rocm62",
        {"gcn_arch": "gfx942:sramecc+:xnack-"},
    ),
    "mi355x": (
        "AMD Instinct MI355X", "0x75A3", 294892, "9.5", 256, 2400, 1900, "epyc", "rocm70",
        {"gcn_arch": "gfx950:sramecc+:xnack-"},
    ),
    "rtx_pro_6000": (
        "NVIDIA RTX PRO 6000 Blackwell Server Edition", "0x2BB5", 97887, "12.0", 188, 2430, 14001,
        "epyc", "cu128", {},
    ),
    # Grace-Blackwell compute trays: the GPUs sit on Grace hosts (aarch64), 4 per tray.
    "gb200": ("NVIDIA GB200", "0x2941", 189471, "10.0", 148, 1965, 3996, "grace", "cu128", {}),
    "gb300": ("NVIDIA GB300", "0x31C2", 284208, "10.3", 148, 2032, 3996, "grace", "cu130", {}),
}  # fmt: skip
