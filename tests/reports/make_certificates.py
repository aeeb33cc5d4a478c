"""Writes fixtures/certificates/h100-node-{before,after}.json: a synthetic two-GPU H100 node,
before and after an image change, for `rigcheck diff` and the report page's tests.

The numbers are invented for the tests (the note inside says so); the certificates are built
with the real certificate code, so a schema change shows up here. Regenerate with
`python tests/reports/make_certificates.py`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace

from rigcheck.facts import Facts
from rigcheck.reports.certificate import build_certificate, write_certificate
from rigcheck.spec import load_spec_file
from rigcheck.verdict import judge

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "fixtures" / "certificates"
NOTE = (
    "synthetic test fixture: an invented two-GPU H100 node and invented tiers and measurements, "
    "for rigcheck's own tests; not a real machine"
)
SERIALS = ("1652923456781", "1652923456782")
UUIDS = ("GPU-5d1e2c33-8f7a-4c1b-9e2d-0a1b2c3d4e51", "GPU-5d1e2c33-8f7a-4c1b-9e2d-0a1b2c3d4e52")
FIGURES = {
    "matmul_bf16_tflops": {
        "unit": "TFLOP/s",
        "definition": "dense bf16 matmul 8192x8192x8192, median of 20 timed runs after warm-up",
        "datasheet": {"value": 989.4, "source": "NVIDIA H100 datasheet: BF16 dense (fixture)"},
        "achievable": {"value": 750.0, "source": "invented for this fixture"},
        "floor": {"value": 600.0, "source": "invented for this fixture"},
    },
    "hbm_bandwidth_gbps": {
        "unit": "GB/s",
        "definition": "device memory copy bandwidth, 1 GiB buffer, read+write bytes / time",
        "datasheet": {"value": 3350.0, "source": "NVIDIA H100 datasheet: HBM3 (fixture)"},
        "achievable": {"value": 2900.0, "source": "invented for this fixture"},
        "floor": {"value": 2600.0, "source": "invented for this fixture"},
    },
}


def device(index: int) -> dict:
    return {
        "index": index,
        "vendor": "nvidia",
        "name": "NVIDIA H100 80GB HBM3",
        "pci": {"bus_id": f"0000:{0x18 + index * 0x10:02x}:00.0", "device_id": "0x2330"},
        "uuid": UUIDS[index],
        "serial": SERIALS[index],
        "memory_total_bytes": 85520809984,
        "compute_capability": "9.0",
        "ecc": {"current": True, "pending": True},
        "pcie": {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16},
        "temperature_c": 31 + index,
    }


def machine(driver: str, torch: str) -> dict:
    return {
        "schema_version": 1,
        "origin": {"kind": "synthetic", "note": NOTE},
        "host": {"hostname": "h100-node-07", "os": "Linux", "kernel": "5.15.0-105-generic",
                 "os_release": "Ubuntu 22.04.4 LTS", "python": "3.11.9",
                 "cpu": {"model": "Intel(R) Xeon(R) Platinum 8480+", "cores_physical": 112},
                 "memory_total_bytes": 2164173455360},
        "software": {
            "torch": {"version": torch, "build": "cuda", "cuda_version": "12.4"},
            "nvidia_driver": {"present": True, "version": driver, "cuda_driver_version": "12.4"},
            "nvcc": {"version": "12.4"},
            "flash_attn": {"installed": True, "version": "2.6.3"},
        },
        "devices": [device(0), device(1)],
    }  # fmt: skip


def fact_check(name: str, file: str, outcome: str = "pass", message: str | None = None) -> dict:
    return {
        "id": f"suites/facts/{file}::{name}", "name": name, "area": "facts",
        "file": f"suites/facts/{file}", "line": 1, "outcome": outcome,
        "phase": None if outcome == "pass" else "call", "message": message, "detail": None,
        "duration_s": 0.01, "warnings": [], "figures": [],
    }  # fmt: skip


def perf_check(figure: str, gpu: int, measured: float) -> dict:
    judgement = judge(figure, measured, FIGURES[figure]).as_dict()
    spec = FIGURES[figure]
    entry = {
        "label": f"gpu{gpu}",
        **judgement,
        "definition": spec["definition"],
        "sources": {t: spec[t]["source"] for t in ("datasheet", "achievable", "floor")},
    }
    outcome = judgement["verdict"]
    name = f"test_{figure}[gpu{gpu}]"
    return {
        "id": f"suites/perf/test_throughput.py::{name}", "name": name, "area": "perf",
        "file": "suites/perf/test_throughput.py", "line": 1, "outcome": outcome,
        "phase": None if outcome == "pass" else "call", "message": judgement["reason"],
        "detail": None, "duration_s": 4.2, "warnings": [], "figures": [entry],
    }  # fmt: skip


def certificate(driver: str, torch: str, figures: dict, started: str, extra_fail: dict | None):
    spec = load_spec_file(REPO / "expected" / "h100.json")
    target = SimpleNamespace(spec=spec, how="named with -m", facts=Facts(machine(driver, torch)))
    checks = [
        fact_check("test_product_matches_class", "test_identity.py"),
        fact_check("test_device_count", "test_identity.py"),
        extra_fail or fact_check("test_driver_meets_class_minimum", "test_software_stack.py"),
        *(perf_check(f, gpu, v) for (f, gpu), v in figures.items()),
    ]
    run = {
        "id": f"{started.replace('-', '').replace(':', '')}-h100-node-07",
        "command_line": "pytest -m h100",
        "args": ["-m", "h100"],
        "cwd": "/home/ops/rigcheck",
        "started_at": started,
        "finished_at": started[:-3] + "51Z",
        "duration_s": 51.0,
        "report_dir": "reports/fixture",
    }
    failed = any(c["outcome"] == "fail" for c in checks)
    result = build_certificate(
        run=run, target=target, checks=checks, selected=[c["id"] for c in checks],
        exit_status=1 if failed else 0, partial_reason=None,
    )  # fmt: skip
    return {"note": NOTE, **result}


def main() -> None:
    before = {
        ("matmul_bf16_tflops", 0): 731.5,
        ("matmul_bf16_tflops", 1): 726.0,
        ("hbm_bandwidth_gbps", 0): 2951.0,
        ("hbm_bandwidth_gbps", 1): 2938.0,
    }
    after = copy.copy(before)
    after[("matmul_bf16_tflops", 1)] = 571.2  # a slow GPU after the image change
    after[("hbm_bandwidth_gbps", 0)] = 3001.0  # +1.7%: noise
    old_driver = fact_check(
        "test_driver_meets_class_minimum", "test_software_stack.py", "fail",
        "driver 525.60.13 is older than the h100 minimum 535.54.03. Upgrade the NVIDIA driver.",
    )  # fmt: skip
    OUT.mkdir(parents=True, exist_ok=True)
    write_certificate(
        OUT / "h100-node-before.json",
        certificate("550.54.15", "2.5.1+cu124", before, "2026-11-20T09:14:00Z", None),
    )
    write_certificate(
        OUT / "h100-node-after.json",
        certificate("525.60.13", "2.6.0+cu124", after, "2026-11-21T09:14:00Z", old_driver),
    )
    print(json.dumps(sorted(p.name for p in OUT.iterdir())))


if __name__ == "__main__":
    main()
