"""`rigcheck fit --inference --engine hf` against the cache transformers 5.23 really keeps: each
small model prefills a prompt on CPU and every storage its DynamicCache holds is counted.

What the measurement shows (and rigcheck now says): a sliding-window or chunked layer holds the
whole prefill until the first decoding step (DynamicSlidingWindowLayer keeps a view of the
concatenated keys), a Mamba layer its conv state (all conv_kernel columns, model dtype) and an
fp32 ssm state. Scalar counters (a sliding layer's window as a 0-d int64) are left out.
"""

import json
import warnings

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from rigcheck.memory import trace  # noqa: E402

from .test_trace import FAMILIES, SMALL  # noqa: E402

HYBRIDS = {
    "granitemoehybrid": dict(SMALL, model_type="granitemoehybrid",
                             layer_types=["mamba", "attention"], mamba_n_heads=4, mamba_d_head=32,
                             mamba_d_state=16, mamba_n_groups=1, mamba_expand=2,
                             num_local_experts=4, num_experts_per_tok=2,
                             shared_intermediate_size=64, mamba_chunk_size=32),
    "jamba": dict(SMALL, model_type="jamba", attn_layer_period=2, attn_layer_offset=1,
                  expert_layer_period=2, expert_layer_offset=1, num_experts=4,
                  num_experts_per_tok=2, mamba_d_state=16, mamba_expand=2, mamba_d_conv=4,
                  use_mamba_kernels=False),
    "mistral": dict(SMALL, model_type="mistral", sliding_window=8),  # the formulas' family
}  # fmt: skip
CASES = {**{f: FAMILIES[f][0] for f in ("falcon_h1", "gpt_oss", "llama4")}, **HYBRIDS}


def cache_bytes(cache) -> int:
    """Every distinct storage of the cache's tensors but 0-d counters, once."""
    seen: dict[int, int] = {}

    def walk(obj) -> None:
        if isinstance(obj, torch.Tensor):
            if obj.dim():
                seen[obj.untyped_storage().data_ptr()] = obj.untyped_storage().nbytes()
        elif isinstance(obj, (list, tuple)):
            for x in obj:
                walk(x)
        elif isinstance(obj, dict):
            for x in obj.values():
                walk(x)
        elif hasattr(obj, "__dict__"):
            for x in vars(obj).values():
                walk(x)

    walk(cache)
    return sum(seen.values())


def real_prefill_cache(config: dict, seq: int) -> int:
    hf = trace.hf_config(config)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = trace._model_class(hf).from_config(hf, dtype=torch.bfloat16).eval()
        with torch.no_grad():
            out = model(input_ids=torch.randint(3, 100, (1, seq)), use_cache=True)
    return cache_bytes(out.past_key_values)


@pytest.mark.parametrize("family", sorted(CASES))
def test_hf_cache_is_what_transformers_keeps_after_prefill(family, tmp_path, capsys) -> None:
    from rigcheck.memory.cli import main

    config, seq = CASES[family], 40  # longer than the 8-token window and 16-token chunk
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    argv = ["fit", "--config", str(path), "--vram", "80GiB", "--inference", "--engine", "hf",
            "--precision", "bf16", "--seq", str(seq), "--json"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kv_cache_bytes"] == real_prefill_cache(config, seq) > 0
