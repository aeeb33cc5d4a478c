"""What tests/attest sign and verify: real inputs of the replay path, named once."""

from rigcheck.layout import ROOT_DIR

SUITES = ROOT_DIR / "suites"
SNAPSHOT = ROOT_DIR / "fixtures" / "snapshots" / "h100.json"
MEASUREMENTS = ROOT_DIR / "fixtures" / "measurements" / "h100-synthetic.json"
SPEC = ROOT_DIR / "expected" / "h100.json"
NONCE = "c0ffee-renter-challenge-7d1f"
# The identity checks and the three figures h100-synthetic.json holds: a passing run.
SELECTION = "identity or matmul_tflops and (bf16 or fp8) or memory_bandwidth and device_copy"

# Files in every bad shape, beside the signed run (test_bad_input, test_envelope_shapes).
BAD = {
    "missing.json": None,
    "empty.json": "",
    "array.json": "[]",
    "text.json": "not json at all",
    "truncated.json": '{"schema_version": 1, "devi',
    "binary.json": bytes(range(256)),
    "folder": "DIR",
}
