"""The single-fact mutations issue 10 found passing or crashing: each now fails naming it."""

import json
from pathlib import Path

import pytest

from rigcheck.testing import mutations

SNAPSHOTS = Path(__file__).resolve().parents[2] / "fixtures" / "snapshots"
# (class, fact, value): 6 passed, 5 crashed in a check, 1 was "row remap FAILED" on "N/A".
CASES = [
    ("h100", "devices.0.ecc.current", "[Not Supported]"),
    ("h100", "devices.0.persistence_mode", "N/A"),
    ("h100", "smoke.flash_attn_forward.ok", "Enabled"),
    ("m4pro", "smoke.mps.roundtrip.ok", "N/A"),
    ("h100", "software.torch.version", []),
    ("cpu", "host.memory_total_bytes", "[Not Supported]"),
    ("h100", "devices.0.memory_total_bytes", "80"),
    ("h100", "devices.0.memory_total_bytes", None),
    ("h100", "devices.0.pcie.gen_max", "16"),
    ("h100", "devices.0.power.limit_w", "N/A"),
    ("h100", "devices.0.ecc_errors.volatile_uncorrected", None),
    ("h100", "devices.0.remapped_rows.failure", "N/A"),
]


@pytest.mark.parametrize(("name", "path", "value"), CASES, ids=[f"{c[1]}={c[2]!r}" for c in CASES])
def test_issue_mutation_fails_naming_the_fact(replay, name, path, value):
    good = json.loads((SNAPSHOTS / f"{name}.json").read_text())
    *parents, last = path.split(".")
    broken = json.loads(json.dumps(good))
    node = broken
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[last] = value
    result = replay(broken, "-m", f"{name} and facts")
    verdict = mutations.classify(
        result.ret, result.failed, result.errors, result.output, path, good
    )
    assert verdict == mutations.GOOD, result.describe()
    assert "row remap FAILED" not in "".join(result.failed.values())
