"""vLLM's cache for hybrid (Mamba) and chunked-attention families against vLLM's own arithmetic.

`vllm_*` below re-implement, line by line, the vLLM code each names (vllm-project/vllm):
- vllm/model_executor/layers/mamba/mamba_utils.py at 02d71083: MambaStateShapeCalculator
  mamba1_state_shape / mamba2_state_shape / extra_groups_for_head_shards (SD conv layout, the
  default), _mamba_state_dtype ("auto": the model dtype for conv and ssm state);
- vllm/v1/kv_cache_interface.py at 001cabc1: MambaSpec.page_size_bytes and max_memory_usage_bytes
  (mamba_cache_mode "none"), FullAttentionSpec / ChunkedLocalAttentionSpec.max_memory_usage_bytes
  (the newer ChunkedLocalAttentionSpec adds max_in_flight_tokens instead of
  max_num_batched_tokens);
- vllm/model_executor/models/config.py at 0144dd5b: HybridAttentionMambaModelConfig (attention
  block = 16 x cdiv(mamba page, 16 x attention page of one token), mamba page padded to it);
- vllm/v1/core/kv_cache_utils.py at 001cabc1: layers of one type in groups of G, one page each.

The configs are the real models' fields, each with where it was read; no transformers needed (the
traced parameter count is stood in for by a number: these tests are about the cache).
"""

import json
from math import prod
from pathlib import Path
from types import SimpleNamespace

import pytest

from rigcheck.memory import hybrid_layers
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import Job, estimate
from rigcheck.memory.kv_per_gpu import kv_bytes_per_request, vllm_layout

BF16 = 2

# tiiuae/Falcon-H1-7B-Instruct config.json, fields as quoted from mlx-community's
# Falcon-H1-7B-Instruct-4bit in a test of the code index (find_string id 70958236989).
FALCON_H1_7B = {
    "model_type": "falcon_h1",
    "num_hidden_layers": 44,
    "num_attention_heads": 12,
    "num_key_value_heads": 2,
    "head_dim": 128,
    "hidden_size": 3072,
    "mamba_d_conv": 4,
    "mamba_d_head": 128,
    "mamba_d_ssm": 3072,
    "mamba_d_state": 256,
    "mamba_expand": 2,
    "mamba_n_groups": 1,
    "mamba_n_heads": 24,
    "intermediate_size": 12288,
    "vocab_size": 130049,
}  # fmt: skip  (intermediate_size and vocab_size: not in that quote, written by hand)
# ai21labs/AI21-Jamba-1.5-Mini config.json (quoted with its URL in onnx-diagnostic's
# get_ai21_jamba_15_mini, find_string id 32332034728).
JAMBA_MINI = {
    "model_type": "jamba", "attn_layer_offset": 4, "attn_layer_period": 8, "hidden_size": 4096,
    "intermediate_size": 14336, "mamba_d_conv": 4, "mamba_d_state": 16, "mamba_expand": 2,
    "num_attention_heads": 32, "num_experts": 16, "num_experts_per_tok": 2,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 65536,
}  # fmt: skip
# ibm-granite/granite-4.0-h-small config.json: hidden, layers, heads, experts, mamba_d_state /
# d_conv / expand and the 36 mamba + 4 attention layer_types as quoted from it (find_string id
# 57624389648, which does not quote the order: rigcheck counts, order does not matter here).
# mamba_n_heads 128, mamba_d_head 64, mamba_n_groups 1: written by hand after searching (not
# found quoted; 128 x 64 = mamba_expand x hidden_size, as Mamba2 requires).
GRANITE_4_H_SMALL = {
    "model_type": "granitemoehybrid", "hidden_size": 4096, "num_hidden_layers": 40,
    "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 72,
    "num_experts_per_tok": 10, "shared_intermediate_size": 1536, "intermediate_size": 768,
    "mamba_d_state": 128, "mamba_d_conv": 4, "mamba_expand": 2, "vocab_size": 100352,
    "layer_types": ["mamba"] * 9 + ["attention"] + (["mamba"] * 9 + ["attention"]) * 3,
    "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_n_groups": 1,
}  # fmt: skip
# meta-llama/Llama-4-Scout-17B-16E text_config (the unsloth mirror, quoted in a test of the code
# index, find_string id 67267440251); no_rope_layers [] -> every 4th layer NoPE.
LLAMA4_SCOUT = {
    "model_type": "llama4_text", "attention_chunk_size": 8192, "head_dim": 128,
    "hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
    "no_rope_layers": [], "num_attention_heads": 40, "num_experts_per_tok": 1,
    "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 16,
    "vocab_size": 202048, "interleave_moe_layer_step": 1,
}  # fmt: skip


# --- vLLM's code, re-implemented --------------------------------------------------------------


def cdiv(a: int, b: int) -> int:
    return -(a // -b)


def vllm_extra_groups_for_head_shards(ngroups: int, tp_size: int) -> int:
    if ngroups % tp_size == 0:
        return 0
    return tp_size - ngroups


def vllm_mamba2_state_shape(tp_world_size, intermediate_size, n_groups, num_heads, head_dim,
                            state_size, conv_kernel, num_spec=0):  # fmt: skip
    n_groups = n_groups + vllm_extra_groups_for_head_shards(n_groups, tp_world_size)
    conv_dim = intermediate_size + 2 * n_groups * state_size
    conv_state_shape = (conv_kernel - 1 + num_spec, conv_dim // tp_world_size)  # SD layout
    temporal_state_shape = (num_heads // tp_world_size, head_dim, state_size)
    return conv_state_shape, temporal_state_shape


def vllm_mamba1_state_shape(tp_world_size, intermediate_size, state_size, conv_kernel):
    conv_dim = intermediate_size // tp_world_size
    conv_state_shape = (conv_kernel - 1, conv_dim)  # SD layout
    temporal_state_shape = (intermediate_size // tp_world_size, state_size)
    return conv_state_shape, temporal_state_shape


def vllm_mamba_page_size_bytes(shapes, dtype_sizes) -> int:
    return sum(prod(shape) * size for shape, size in zip(shapes, dtype_sizes, strict=True))


def vllm_attn_page_size_1_token(num_kv_heads: int, head_size: int, dtype_size: int) -> int:
    return 2 * 1 * num_kv_heads * head_size * dtype_size


def vllm_hybrid_block_size(mamba_page_size: int, attn_page_size_1_token: int) -> int:
    return 16 * cdiv(mamba_page_size, 16 * attn_page_size_1_token)


def vllm_group_size(counts: list[int]) -> int:
    """_get_kv_cache_groups_uniform_page_size: the smallest type's layer count, the largest when
    it is under 1.5 times the smallest."""
    min_num_layers, max_num_layers = min(counts), max(counts)
    if max_num_layers < min_num_layers * 1.5:
        return max_num_layers
    return min_num_layers


def vllm_request_bytes(types: list[tuple[int, int]], page: int) -> int:
    """_max_memory_usage_bytes_from_groups: every group of G layers (padded) charges G pages per
    block it needs; types: (layers, one layer's max_memory_usage_bytes)."""
    size = vllm_group_size([n for n, _ in types if n])
    return sum(cdiv(n, size) * size * usage for n, usage in types if n)


def vllm_mamba2_request(cfg, tp, max_model_len, mamba_layers, attention_layers, intermediate):
    heads, head_dim, groups = cfg["mamba_n_heads"], cfg["mamba_d_head"], cfg["mamba_n_groups"]
    state, conv = cfg["mamba_d_state"], cfg["mamba_d_conv"]
    shapes = vllm_mamba2_state_shape(tp, intermediate, groups, heads, head_dim, state, conv)
    return _hybrid_request(cfg, tp, max_model_len, mamba_layers, attention_layers, shapes)


def _hybrid_request(cfg, tp, max_model_len, mamba_layers, attention_layers, shapes):
    mamba_page_size = vllm_mamba_page_size_bytes(shapes, (BF16, BF16))  # "auto": model dtype
    head_size = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    one_token = vllm_attn_page_size_1_token(cfg["num_key_value_heads"] // tp, head_size, BF16)
    block_size = vllm_hybrid_block_size(mamba_page_size, one_token)
    attn_page_size = block_size * one_token  # the mamba page is padded to it
    assert attn_page_size >= mamba_page_size
    full = cdiv(max_model_len, block_size) * attn_page_size  # FullAttentionSpec
    mamba = attn_page_size * (1 + 0)  # MambaSpec, mamba_cache_mode "none", no spec blocks
    return vllm_request_bytes([(attention_layers, full), (mamba_layers, mamba)], 1), block_size


# --- rigcheck ---------------------------------------------------------------------------------


def job(cfg: dict, seq: int, **kw) -> Job:
    count = 7_000_000_000  # stands in for the traced count; the cache does not depend on it
    traced = SimpleNamespace(
        parameters=SimpleNamespace(total=count, active=count, parts={"experts": 0}),
        lora_trainable=None,
    )
    return Job(arch=None, params=count, traced=traced, hybrid=hybrid_layers.from_config(cfg),
               inference=True, seq=seq, precision="bf16", **kw)  # fmt: skip


@pytest.mark.parametrize("tp", [1, 2])
@pytest.mark.parametrize("seq", [4096, 32768])
def test_falcon_h1_every_layer_caches_attention_and_mamba2_state(tp: int, seq: int) -> None:
    want, block = vllm_mamba2_request(FALCON_H1_7B, tp, seq, 44, 44, FALCON_H1_7B["mamba_d_ssm"])
    the_job = job(FALCON_H1_7B, seq, tp=tp, gpus=tp)
    assert kv_bytes_per_request(the_job, seq) == want
    assert vllm_layout(the_job, seq).block == block
    if tp == 1:  # by hand: conv 3 x (3072 + 2 x 256) + ssm 24 x 128 x 256, bf16; 1 KiB a token
        assert block == 16 * cdiv(2 * (3 * 3584 + 24 * 128 * 256), 16 * 1024) == 1568


@pytest.mark.parametrize("seq", [2048, 65536])
def test_granite_4_hybrid_four_attention_layers_and_36_mamba2(seq: int) -> None:
    cfg = GRANITE_4_H_SMALL
    want, _ = vllm_mamba2_request(cfg, 1, seq, 36, 4, cfg["mamba_expand"] * cfg["hidden_size"])
    assert kv_bytes_per_request(job(cfg, seq), seq) == want


@pytest.mark.parametrize("seq", [4096, 262144])
def test_jamba_mamba1_state_and_one_attention_layer_in_eight(seq: int) -> None:
    cfg = JAMBA_MINI
    attention = sum(1 for i in range(32) if i % 8 == 4)  # transformers' layers_block_type
    shapes = vllm_mamba1_state_shape(1, cfg["mamba_expand"] * cfg["hidden_size"],
                                     cfg["mamba_d_state"], cfg["mamba_d_conv"])  # fmt: skip
    want, block = _hybrid_request(cfg, 1, seq, 32 - attention, attention, shapes)
    assert kv_bytes_per_request(job(cfg, seq), seq) == want
    assert (attention, block) == (4, 80)  # 311,296 B of state: 16 x cdiv(311296, 16 x 4096)


@pytest.mark.parametrize(("version", "in_flight"), [("0.25", 8192), ("0.33", 2 * 8192)])
def test_llama4_chunked_local_attention_by_version(version: str, in_flight: int) -> None:
    seq, block = 131072, 16
    one_token = vllm_attn_page_size_1_token(8, 128, BF16)
    page = block * one_token
    chunked = cdiv(min(8192 + in_flight, seq), block) * page  # ChunkedLocalAttentionSpec
    full = cdiv(seq, block) * page
    want = vllm_request_bytes([(12, full), (36, chunked)], 1)  # NoPE every 4th: 12 full
    assert kv_bytes_per_request(job(LLAMA4_SCOUT, seq, vllm_version=version), seq) == want


def test_fit_answers_for_a_hybrid_and_says_how() -> None:
    the_job = job(FALCON_H1_7B, 32768)
    result = estimate(the_job)
    assert result.weights_bytes == 7_000_000_000 * BF16
    assert result.kv_cache_bytes == kv_bytes_per_request(the_job, 32768)
    assert (result.params_source, result.activations_source) == (
        "traced",
        "formula (config widths)",
    )
    assert estimate(job(FALCON_H1_7B, 32768, tp=2, gpus=2)).weights_bytes == 7_000_000_000


def test_hf_keeps_every_prefilled_token_and_each_mamba_layers_state() -> None:
    """Falcon-H1-7B in transformers' cache (held to a real prefill in test_hf_hybrid_cache.py):
    44 attention layers x 2 x 2 KV heads x 128 x 2 B a token, and per Mamba layer a conv state of
    4 columns x (3072 + 2 x 256) in bf16 and an fp32 ssm state of 24 x 128 x 256."""
    per_layer_state = 4 * (3072 + 2 * 256) * 2 + 24 * 128 * 256 * 4
    assert kv_bytes_per_request(job(FALCON_H1_7B, 4096, engine="hf"), 4096) == (
        44 * 2 * 2 * 128 * 2 * 4096 + 44 * per_layer_state
    )


def test_only_with_the_trace() -> None:
    with pytest.raises(ConfigError, match="needs the tensor shapes"):
        Job(arch=None, params=10**9, inference=True, hybrid=hybrid_layers.from_config(JAMBA_MINI))


@pytest.mark.parametrize("tp", [1, 2, 4])
@pytest.mark.parametrize(
    "cfg", [FALCON_H1_7B, GRANITE_4_H_SMALL, JAMBA_MINI], ids=lambda c: c["model_type"]
)
def test_one_mamba_layers_state_is_vllms_page_before_padding(cfg: dict, tp: int) -> None:
    """The unpadded MambaSpec page: the block rounding above can hide a wrong shape."""
    mamba = hybrid_layers.from_config(cfg).mamba
    intermediate = cfg.get("mamba_d_ssm") or cfg["mamba_expand"] * cfg["hidden_size"]
    if cfg["model_type"] == "jamba":
        shapes = vllm_mamba1_state_shape(
            tp, intermediate, cfg["mamba_d_state"], cfg["mamba_d_conv"]
        )
    else:
        shapes = vllm_mamba2_state_shape(tp, intermediate, cfg["mamba_n_groups"],
                                         cfg["mamba_n_heads"], cfg["mamba_d_head"],
                                         cfg["mamba_d_state"], cfg["mamba_d_conv"])  # fmt: skip
    assert mamba.shapes(tp) == shapes
    assert mamba.state_bytes(tp, BF16) == vllm_mamba_page_size_bytes(shapes, (BF16, BF16))


# --- attention-only trace families: OLMo-2, GLM-4, gpt-oss -----------------------------------
# openai/gpt-oss-20b config.json as quoted in a circuit-tracer test (find_string id 54188904742:
# 24 layers, layer_types sliding/full alternating, sliding_window 128, 32 experts, top 4);
# openai/gpt-oss-120b from its URL-cited quote (find_string id 71368259812: 36 layers, 128
# experts, layer_types 18 x [sliding, full]).
GPT_OSS_20B = {
    "model_type": "gpt_oss", "head_dim": 64, "hidden_size": 2880, "intermediate_size": 2880,
    "layer_types": ["sliding_attention", "full_attention"] * 12, "num_attention_heads": 64,
    "num_experts_per_tok": 4, "num_hidden_layers": 24, "num_key_value_heads": 8,
    "num_local_experts": 32, "sliding_window": 128, "vocab_size": 201088,
    "quantization_config": {"quant_method": "mxfp4"},
}  # fmt: skip
GPT_OSS_120B = dict(GPT_OSS_20B, num_hidden_layers=36, num_local_experts=128,
                    layer_types=["sliding_attention", "full_attention"] * 18)  # fmt: skip
# THUDM/glm-4-9b-chat-hf (Glm4ForCausalLM) fields as quoted in a Rust test's
# parses_glm4_config_partial_rotary (find_string id 56014767049; the quote names no repository).
GLM4_9B = {
    "model_type": "glm4", "hidden_size": 4096, "intermediate_size": 13696,
    "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 2,
    "head_dim": 128, "vocab_size": 151552, "partial_rotary_factor": 0.5,
}  # fmt: skip
# allenai/OLMo-2-1124-7B: written by hand after searching (no quote of its config.json found;
# OLMo-2-0425-1B's verbatim quote, find_string id 58554976702, has the same field names).
OLMO2_7B = {
    "model_type": "olmo2", "hidden_size": 4096, "intermediate_size": 11008,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
    "vocab_size": 100352,
}  # fmt: skip


# Published configs in model_configs.json (each with its source): Granite-3.3-8B, SmolLM3-3B
# (every layer full attention: its no_rope_layers change RoPE, not the cache) and Qwen2.5-VL-7B
# (the language model's 28 layers; the vision tower caches nothing).
_PUBLISHED = json.loads((Path(__file__).parent / "model_configs.json").read_text())
GRANITE_8B, SMOLLM3_3B, QWEN25_VL_7B = (
    _PUBLISHED[name]["config"]
    for name in ("granite-3.3-8b-instruct", "smollm3-3b", "qwen2.5-vl-7b-instruct")
)


def vllm_full_attention_usage(max_model_len: int, page_size_bytes: int, block_size: int) -> int:
    """FullAttentionSpec.max_memory_usage_bytes (kv_cache_interface.py at 001cabc1)."""
    return cdiv(max_model_len, block_size) * page_size_bytes


def vllm_sliding_window_usage(sliding_window, max_model_len, max_num_batched_tokens,
                              page_size_bytes, block_size) -> int:  # fmt: skip
    """SlidingWindowSpec.max_memory_usage_bytes (at 001cabc1; from 0.26 the in-flight tokens
    are max_in_flight_tokens, the same place)."""
    num_tokens = min(sliding_window - 1 + max_num_batched_tokens, max_model_len)
    return (cdiv(num_tokens, block_size) + 1) * page_size_bytes


@pytest.mark.parametrize(
    "cfg", [OLMO2_7B, GLM4_9B, GRANITE_8B, SMOLLM3_3B, QWEN25_VL_7B], ids=lambda c: c["model_type"]
)
@pytest.mark.parametrize("tp", [1, 2])
def test_full_attention_families_one_group_of_every_layer(cfg: dict, tp: int) -> None:
    seq, block = 32768, 16
    text = cfg.get("text_config") or cfg
    head = text.get("head_dim") or text["hidden_size"] // text["num_attention_heads"]
    kv_heads = max(1, text["num_key_value_heads"] // tp)
    page = block * vllm_attn_page_size_1_token(kv_heads, head, BF16)
    layers = text["num_hidden_layers"]
    want = vllm_request_bytes([(layers, vllm_full_attention_usage(seq, page, block))], 1)
    assert kv_bytes_per_request(job(cfg, seq, tp=tp, gpus=tp), seq) == want
    if cfg is GLM4_9B and tp == 1:  # by hand: 40 layers x 2 x 2 heads x 128 x 2 B = 40 KiB a token
        assert want == 40 * 2 * 2 * 128 * 2 * seq
    if cfg is QWEN25_VL_7B and tp == 1:  # 28 layers x 2 x 4 heads x 128 x 2 B = 56 KiB a token
        assert want == 28 * 2 * 4 * 128 * 2 * seq


@pytest.mark.parametrize("cfg", [GPT_OSS_20B, GPT_OSS_120B], ids=["20b", "120b"])
@pytest.mark.parametrize(("version", "in_flight"), [("0.25", 8192), ("0.33", 2 * 8192)])
@pytest.mark.parametrize("seq", [4096, 131072])
def test_gpt_oss_half_its_layers_keep_a_128_token_window(cfg, version, in_flight, seq) -> None:
    """gpt-oss: sliding and full layers alternate, as many of each: one group size, half the
    groups charge the window plus the in-flight tokens (capped at the request), not the request."""
    block = 16
    page = block * vllm_attn_page_size_1_token(8, 64, BF16)
    half = cfg["num_hidden_layers"] // 2
    want = vllm_request_bytes([
        (half, vllm_full_attention_usage(seq, page, block)),
        (half, vllm_sliding_window_usage(128, seq, 8192, page, block) if version == "0.25"
         else vllm_sliding_window_usage(128, seq, in_flight, page, block)),
    ], 1)  # fmt: skip
    the_job = job(cfg, seq, vllm_version=version)
    assert kv_bytes_per_request(the_job, seq) == want
    assert vllm_layout(the_job, seq).group_size == half


def test_gpt_oss_without_layer_types_slides_on_even_layers() -> None:
    cfg = {k: v for k, v in GPT_OSS_20B.items() if k != "layer_types"}
    hy = hybrid_layers.from_config(cfg)
    assert (hy.sliding_layers, hy.full_layers, hy.window) == (12, 12, 128)
    assert hy.mlp_width == 4 * 2880 and hy.quantization == "mxfp4"  # top-4 experts per token


def test_trace_only_attention_families_answer_and_say_how() -> None:
    from rigcheck.memory.cli import hybrid_convention

    the_job = job(GPT_OSS_20B, 8192)
    result = estimate(the_job)
    assert result.kv_cache_bytes == kv_bytes_per_request(the_job, 8192) > 0
    line = hybrid_convention(the_job)
    assert "12 sliding-window layers (128-token window)" in line
    assert "routed experts' weights at MXFP4's 4.25 bits" in line
    assert "sliding" not in hybrid_convention(job(OLMO2_7B, 8192))


def test_mxfp4_experts_are_4_25_bits_and_the_rest_at_the_working_precision():
    """OpenAI's gpt-oss model card: MoE weights at 4.25 bits a parameter (MXFP4: 4-bit values,
    one 8-bit scale per 32); a checkpoint that is not MXFP4 keeps every weight at --precision."""
    from rigcheck.memory.hybrid_layers import from_config, weights_bytes

    mxfp4 = from_config(GPT_OSS_20B)
    assert weights_bytes(mxfp4, total=1000, experts=640, element=2) == 340 + 360 * 2
    assert weights_bytes(mxfp4, total=1000, experts=641, element=2) == 341 + 359 * 2  # rounded up
    plain = from_config({**GPT_OSS_20B, "quantization_config": None})
    assert weights_bytes(plain, total=1000, experts=640, element=2) == 2000


def test_mamba_prefix_caching_modes_are_refused_not_answered() -> None:
    """vLLM keeps Mamba states at block boundaries with prefix caching on (mamba_cache_mode align
    or all); only none, its default for hybrid models, is modelled. Layers without Mamba state
    cache the same in every mode."""
    for mode in ("align", "all"):
        with pytest.raises(ConfigError, match=f"--mamba-cache-mode {mode}: .* not modelled"):
            estimate(job(FALCON_H1_7B, 4096, mamba_cache_mode=mode))
    assert estimate(job(FALCON_H1_7B, 4096)).kv_cache_bytes > 0
    assert estimate(job(OLMO2_7B, 4096, mamba_cache_mode="align")) == estimate(job(OLMO2_7B, 4096))


def test_mxfp4_under_transformers_is_refused_not_counted_at_4_25_bits() -> None:
    """transformers 5.23 keeps MXFP4 only with triton and kernels on a capable GPU, else
    dequantizes to bf16 (quantizers/quantizer_mxfp4.py validate_environment)."""
    with pytest.raises(ConfigError, match="--engine hf with an MXFP4 checkpoint is not modelled"):
        estimate(job(GPT_OSS_20B, 4096, engine="hf"))
    plain = estimate(job({**GPT_OSS_20B, "quantization_config": None}, 4096, engine="hf"))
    assert plain.weights_bytes == 7_000_000_000 * BF16
