"""KV cache and inference memory."""

from dataclasses import replace

from hypothesis import example, given
from hypothesis import strategies as st

from rigcheck.memory.architecture import Architecture
from rigcheck.memory.estimate import Job, estimate
from rigcheck.memory.inference import kv_cache_bytes
from rigcheck.memory.presets import preset

from .strategies import architectures

sizes = st.integers(1, 4096)


@given(architectures(), sizes, sizes, st.sampled_from((1, 2, 4)), st.integers(1, 8))
def test_kv_cache_is_linear_in_tokens_batch_and_element_size(arch, tokens, batch, e, k) -> None:
    base = kv_cache_bytes(arch, tokens, batch, e)
    assert kv_cache_bytes(arch, k * tokens, batch, e) == k * base
    assert kv_cache_bytes(arch, tokens, k * batch, e) == k * base
    assert kv_cache_bytes(arch, tokens, batch, k * e) == k * base
    assert kv_cache_bytes(arch, 0, batch, e) == 0


@given(architectures(), sizes, sizes, st.integers(1, 8))
def test_kv_cache_is_linear_in_layers_kv_heads_and_head_dim(arch, tokens, batch, k) -> None:
    base = kv_cache_bytes(arch, tokens, batch, 2)
    scaled = {
        "layers": replace(arch, layers=k * arch.layers),
        "kv_heads": replace(
            arch, kv_heads=k * arch.kv_heads, heads=k * arch.heads, head_dim=arch.dim
        ),
        "head_dim": replace(arch, head_dim=k * arch.dim),
    }
    for bigger in scaled.values():
        assert kv_cache_bytes(bigger, tokens, batch, 2) == k * base


@given(architectures(), sizes, sizes)
def test_gqa_and_mqa_scale_the_multi_head_cache(arch, tokens, batch) -> None:
    mha = replace(arch, kv_heads=arch.heads)
    mqa = replace(arch, kv_heads=1)
    full = kv_cache_bytes(mha, tokens, batch, 2)
    assert kv_cache_bytes(arch, tokens, batch, 2) * arch.heads == full * arch.kv_heads
    assert kv_cache_bytes(mqa, tokens, batch, 2) * arch.heads == full


@given(architectures(), sizes, sizes, st.sampled_from((1, 16, 32)))
def test_paged_cache_rounds_up_to_whole_blocks(arch, tokens, batch, block) -> None:
    exact = kv_cache_bytes(arch, tokens, batch, 2)
    paged = kv_cache_bytes(arch, tokens, batch, 2, block_tokens=block)
    per_token = kv_cache_bytes(arch, 1, batch, 2)
    assert exact <= paged < exact + block * per_token


def test_seed_000_activations_per_token_rule_is_the_kv_cache() -> None:
    """000: "activations per token = 2 x n_layers x hidden x 2 bytes" = 0.5 MiB for Llama-2-7B:
    that is the 16-bit KV cache of one token of a multi-head model, not training activations."""
    assert kv_cache_bytes(preset("llama-2-7b"), 1, 1, 2) == 2 * 32 * 4096 * 2 == 524_288


@st.composite
def same_model_jobs(draw: st.DrawFn) -> Job:
    arch: Architecture = draw(architectures())
    return Job(
        arch=arch,
        precision=draw(st.sampled_from(("fp32", "bf16", "bf16-mixed"))),
        optimizer=draw(st.sampled_from(("adamw", "sgd", "adamw-8bit", "adafactor"))),
        method=draw(st.sampled_from(("full", "qlora"))),
        lora_targets=("qkv",) if arch.fused_qkv else ("q", "v"),  # a drawn shape: no model_type
        batch=draw(st.integers(1, 16)),
        seq=draw(st.integers(1, 4096)),
        attention=draw(st.sampled_from(("eager", "flash"))),
    )


@given(same_model_jobs())
@example(Job(arch=preset("llama-2-7b"), batch=8, seq=4096))
def test_inference_needs_no_more_than_training(job) -> None:
    """Same model, dtype, batch and length, training without recomputation: a layer's stored
    K and V are the KV cache, and it stores more besides. Exact tokens (--engine hf): vLLM's
    whole blocks and sliding-window reservation can exceed a tiny model's training bytes."""
    inference = replace(job, inference=True, engine="hf")
    assert estimate(inference).total_bytes <= estimate(job).total_bytes


def test_long_context_cache_can_exceed_fully_recomputed_training() -> None:
    """The property above needs checkpointing none: with full recomputation training keeps one
    h-wide tensor per layer while a multi-head cache keeps two (K and V)."""
    job = Job(arch=preset("llama-2-7b"), precision="bf16", optimizer="sgd", method="qlora",
              batch=64, seq=4096, checkpointing="full")  # fmt: skip
    inference = replace(job, inference=True, engine="hf")  # prefills whole, as generate() does
    assert estimate(inference).total_bytes > estimate(job).total_bytes


def test_mla_caches_the_latent_once_for_every_head() -> None:
    """DeepSeek-V3 (kv_lora_rank 512, qk_rope_head_dim 64, 61 layers): vLLM's MLAAttentionSpec
    caches one "head" of 512 + 64 per token and layer (vllm/v1/kv_cache_interface.py,
    real_page_size_bytes: block x 1 x head_size x dtype), on every tensor-parallel rank whole."""
    from rigcheck.memory.hf_config import from_hf_config

    config = {"model_type": "deepseek_v3", "vocab_size": 129280, "hidden_size": 7168,
              "intermediate_size": 18432, "num_hidden_layers": 61, "num_attention_heads": 128,
              "num_key_value_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512,
              "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
              "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
              "moe_intermediate_size": 2048, "first_k_dense_replace": 3,
              "max_position_embeddings": 163840}  # fmt: skip
    arch = from_hf_config(config)
    assert kv_cache_bytes(arch, 1, 1, 2) == (512 + 64) * 61 * 2 == 70_272
    one, eight = (
        estimate(Job(arch=arch, inference=True, seq=4096, gpus=g, tp=g)).kv_cache_bytes
        for g in (1, 8)
    )
    assert one == eight == 4096 * 70_272
