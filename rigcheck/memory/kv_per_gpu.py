"""The KV cache one GPU keeps per request: vLLM's padded groups of whole blocks (vllm_kv, with
the hybrid families' Mamba and chunked layers), or transformers' exact tokens (and Mamba state)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rigcheck.memory.architecture import Architecture
from rigcheck.memory.hybrid_layers import per_gpu as hybrid_per_gpu
from rigcheck.memory.inference import kv_cache_bytes, kv_element_bytes
from rigcheck.memory.parallel import kv_heads_per_gpu
from rigcheck.memory.precision import precision
from rigcheck.memory.units import ceil_div
from rigcheck.memory.vllm_kv import (
    MAMBA_PAGES,
    Layout,
    chunked_blocks,
    grouped,
    hybrid_block,
    in_flight_tokens,
    layout,
    sliding_blocks,
)

# Each function takes an estimate.Job (not imported: estimate imports this module).
Job = Any


def kv_bytes_per_request(job: Job, tokens: int) -> int:
    """KV cache bytes one GPU reserves for one request of `tokens` tokens: vLLM's padded groups
    of whole blocks (vllm_kv), or transformers' exact tokens."""
    if job.engine == "vllm":
        return vllm_layout(job, tokens).request_bytes
    if job.arch is None and job.hybrid is not None:
        return _hf_hybrid_bytes(job, tokens)
    share = _kv_share(job.arch, job.tp, job.pp)
    return kv_cache_bytes(share, tokens, 1, _kv_element(job))


def vllm_layout(job: Job, tokens: int) -> Layout:
    """vLLM's KV cache groups on one GPU, at the job's vLLM version and `tokens` per request."""
    flight = in_flight_tokens(
        job.vllm_version, job.max_num_batched_tokens, job.async_scheduling, job.pp
    )
    if job.arch is None and job.hybrid is not None:
        return _hybrid_layout(job, tokens, flight)
    share = _kv_share(job.arch, job.tp, job.pp)
    return layout(share, tokens, _kv_element(job), job.block_size, flight)


def _hybrid_layout(job: Job, tokens: int, flight: int) -> Layout:
    """vLLM's groups for full, chunked, sliding-window and Mamba layers on one GPU: one page size
    for all (the attention block raised to hold a Mamba state, the state padded to it)."""
    hy = job.hybrid
    full, chunked, mamba, sliding = hybrid_per_gpu(hy, job.pp)
    kv_heads = max(1, hy.kv_heads // job.tp)  # as kv_heads_per_gpu
    token_bytes = 2 * kv_heads * hy.head_dim * _kv_element(job)
    block = job.block_size
    if mamba:
        state = hy.mamba.state_bytes(job.tp, precision(job.precision).activation_bytes)
        block = hybrid_block(token_bytes, state, block)
    types = [(full, ceil_div(tokens, block)), (mamba, MAMBA_PAGES["none"])]
    if chunked:
        types.append((chunked, chunked_blocks(hy.chunk, tokens, block, flight)))
    if sliding:
        types.append((sliding, sliding_blocks(hy.window, tokens, block, flight)))
    return grouped(block * token_bytes, block, types)


def _hf_hybrid_bytes(job: Job, tokens: int) -> int:
    """transformers' cache after prefilling `tokens`: every attention layer (full, sliding,
    chunked) holds them all (inference.kv_cache_bytes says why), each Mamba layer its state."""
    hy = job.hybrid
    full, chunked, mamba, sliding = hybrid_per_gpu(hy, job.pp)
    kv_heads = max(1, hy.kv_heads // job.tp)  # as kv_heads_per_gpu
    attention = (full + chunked + sliding) * 2 * kv_heads * hy.head_dim * tokens * _kv_element(job)
    element = precision(job.precision).activation_bytes
    return attention + (mamba * hy.mamba.hf_state_bytes(job.tp, element) if mamba else 0)


def _kv_element(job: Job) -> int:
    return (
        kv_element_bytes(job.kv_dtype)
        if job.kv_dtype
        else precision(job.precision).activation_bytes
    )


def _kv_share(arch: Architecture, tp: int, pp: int) -> Architecture:
    """The layers and KV heads one GPU caches."""
    layers = ceil_div(arch.layers, pp)
    sliding = min(layers, ceil_div(arch.sliding_layers, pp))
    if arch.mla:  # the latent is one "head": every tensor-parallel rank caches it whole
        return replace(arch, layers=layers, sliding_layers=sliding)
    kv = kv_heads_per_gpu(arch, tp)
    return replace(
        arch, layers=layers, sliding_layers=sliding, kv_heads=kv, heads=kv, head_dim=arch.dim
    )
