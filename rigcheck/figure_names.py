"""The one catalogue of figure names a spec may state, each with its fixed unit.

A spec's `figures` keys are judged by name (the perf catalogue's measurements and the
distributed suite's collectives): a misspelt key would never be read, so the check it was
meant for would silently judge nothing. The spec loader refuses a name not listed here, and
tests/spec checks that every measurement the suites make is listed with the same unit.
"""

from __future__ import annotations

TFLOPS = "TFLOP/s"
GBPS = "GB/s"
TOKENS = "tokens/s"

FIGURE_UNITS: dict[str, str] = {
    # rigcheck/measure/catalogue.py (the perf suite)
    "matmul_fp32_tflops": TFLOPS,
    "matmul_tf32_tflops": TFLOPS,
    "matmul_fp16_tflops": TFLOPS,
    "matmul_bf16_tflops": TFLOPS,
    "matmul_fp8_tflops": TFLOPS,
    "device_copy_gbps": GBPS,
    "device_triad_gbps": GBPS,
    "h2d_pinned_gbps": GBPS,
    "d2h_pinned_gbps": GBPS,
    "attention_sdpa_tflops": TFLOPS,
    "attention_flash_attn_tflops": TFLOPS,
    "train_step_tokens_per_s": TOKENS,
    # suites/distributed/test_collectives.py
    "allreduce_busbw_gbps": GBPS,
    "allreduce_ring_busbw_gbps": GBPS,
    "p2p_unidir_gbps": GBPS,
}

# Tiered or quantity fields under `expect`, each with the one unit its checks read it in.
EXPECT_UNITS: dict[str, str] = {
    "gpu_count": "count",
    "memory_per_device": "GiB",
    "tdp": "W",
}
