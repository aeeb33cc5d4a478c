"""Certificates of a synthetic fleet of H100 nodes, built with the real certificate code.

The numbers are invented for rigcheck's own tests (each certificate's note says so).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from rigcheck.reports.certificate import write_certificate

_MAKER = Path(__file__).resolve().parents[1] / "reports" / "make_certificates.py"
_spec = importlib.util.spec_from_file_location("make_certificates", _MAKER)
maker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(maker)

# A healthy node of this fleet: both GPUs well above the fixture's floors (600 and 2,600).
HEALTHY = {"matmul_bf16_tflops": 900.0, "hbm_bandwidth_gbps": 3000.0}


def node_certificate(name: str, figures: dict | None = None, fail: bool = False) -> dict:
    """One node's certificate; `figures` maps (figure, gpu) to a measurement."""
    values = {(f, gpu): v for f, v in HEALTHY.items() for gpu in (0, 1)}
    values.update(figures or {})
    failed = (
        maker.fact_check(
            "test_driver_meets_class_minimum",
            "test_software_stack.py",
            "fail",
            "driver 525.60.13 is older than the h100 minimum 535.54.03. Upgrade the NVIDIA driver.",
        )
        if fail
        else None
    )
    certificate = maker.certificate(
        "550.54.15", "2.5.1+cu124", values, "2026-11-20T09:14:00Z", failed
    )
    certificate["machine"]["host"]["hostname"] = name
    certificate["run"]["id"] = f"20261120T091400Z-{name}"
    return certificate


def write_fleet(root: Path, certificates: dict[str, dict]) -> Path:
    """Each node's certificate where a Slurm job would leave it: <root>/<node>/<run>/."""
    for name, certificate in certificates.items():
        folder = root / name / certificate["run"]["id"]
        folder.mkdir(parents=True)
        write_certificate(folder / "certificate.json", certificate)
    return root
