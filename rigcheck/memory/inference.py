"""Inference memory: weights, the KV cache and a transient working set.

KV cache = 2 (K and V) x layers x kv_heads x head_dim x tokens x batch x bytes per element, so
GQA needs kv_heads/heads of the multi-head cache and MQA 1/heads of it. vLLM allocates whole blocks
of tokens (block_size 16 by default, vllm/config/cache.py); the default of 1 counts tokens exactly.
Sliding-window layers (Mistral, Gemma-2/3) in transformers' cache (--engine hf) hold every
prefilled token until the first decoding step: DynamicSlidingWindowLayer.update (cache_utils.py,
5.23) keeps keys[:, :, -window + 1:], a view that holds the whole concatenated prefill alive
(measured on a small Mistral: 40 tokens held after a 40-token prefill, 8 after one more step),
so a request prefilled whole holds all its tokens at its peak. vLLM reserves: the window less
one token plus the tokens a scheduler step may add (max_num_batched_tokens, chunked prefill),
capped at the request's length, plus one block because the window need not start at a block
boundary; from
vLLM 0.26 the tokens of every batch in flight (two under async scheduling): see vllm_kv, which
also groups the layers as vLLM does.

vLLM pre-allocates: the engine starts only if weights, the profiled activation peak, the CUDA
context and at least one request's KV blocks fit in gpu_memory_utilization of the device (default
0.92: vllm/config/cache.py CacheConfig, vllm-project/vllm at commit 002f10e0; the same default is
quoted from v0.25.0 and v0.30.0 in public write-ups, so it holds over --vllm-version 0.25-0.33);
"fits" for --engine vllm is judged against that share.
"""

from rigcheck.memory.architecture import Architecture
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.units import ceil_div
from rigcheck.memory.vllm_kv import sliding_blocks

KV_DTYPES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}
ENGINES = ("vllm", "hf")


def kv_element_bytes(name: str) -> int:
    """Bytes per cached element for a --kv-dtype name."""
    try:
        return KV_DTYPES[name]
    except KeyError:
        raise ConfigError(
            f"unknown KV cache dtype {name!r}; known: {', '.join(KV_DTYPES)}"
        ) from None


VLLM_GPU_MEMORY_UTILIZATION = 0.92  # vllm/config/cache.py, 0.25 to 0.33
# vLLM's default max_num_batched_tokens: 8192 for `vllm serve` on >= 70 GiB GPUs other than A100,
# and for the offline LLM class elsewhere (vllm/engine/arg_utils.py get_batch_defaults).
VLLM_MAX_NUM_BATCHED_TOKENS = 8192


def kv_cache_bytes(
    arch: Architecture,
    tokens: int,
    batch: int,
    element_bytes: int,
    block_tokens: int = 1,
    inflight: int = 0,
) -> int:
    """Bytes of K and V for `batch` sequences of `tokens` tokens each, in whole blocks.

    block_tokens > 1 is vLLM's paged cache, where a sliding-window layer reserves the window,
    `inflight` scheduled tokens and one block more; block_tokens = 1 caches tokens exactly.
    """
    full = ceil_div(tokens, block_tokens) * block_tokens
    window = _window_tokens(arch, tokens, block_tokens, inflight) if arch.sliding_window else full
    layer_tokens = (arch.layers - arch.sliding_layers) * full + arch.sliding_layers * window
    return arch.kv_cache_width * layer_tokens * batch * element_bytes


def _window_tokens(arch: Architecture, tokens: int, block_tokens: int, inflight: int) -> int:
    """Tokens a sliding-window layer holds for one request of `tokens` tokens."""
    if block_tokens == 1 or tokens == 0:  # transformers: the whole prefill (module docstring)
        return tokens
    return sliding_blocks(arch.sliding_window, tokens, block_tokens, inflight) * block_tokens


def inference_activation_bytes(
    arch: Architecture, tokens: int, batch: int, element_bytes: int, step_tokens: int = 0
) -> int:
    """The transient peak of one layer during prefill, plus fp32 logits of the last position.

    An estimate, not a bound: residual and normed input, then the wider of the attention
    projections (flash attention, no s x s scores) and the MLP intermediates. Nothing is kept
    across layers without a backward pass. step_tokens > 0 caps the tokens one forward pass
    takes: vLLM's chunked prefill runs at most max_num_batched_tokens at a time, and profiles
    its activation peak with exactly that many (vllm/v1/worker/gpu_model_runner.py
    profile_run); 0 prefills every sequence whole, as transformers' generate does.
    """
    widest_attention = 2 * arch.q_width + 2 * arch.kv_width
    widest_mlp = (3 if arch.gated_mlp else 2) * arch.token_mlp_width
    per_token = 2 * arch.hidden + max(widest_attention, widest_mlp)
    in_flight = min(tokens * batch, step_tokens) if step_tokens else tokens * batch
    return element_bytes * in_flight * per_token + 4 * batch * arch.vocab
