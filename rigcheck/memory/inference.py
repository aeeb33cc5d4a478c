"""Inference memory: weights, the KV cache and a transient working set.

KV cache = 2 (K and V) x layers x kv_heads x head_dim x tokens x batch x bytes per element, so
GQA needs kv_heads/heads of the multi-head cache and MQA 1/heads of it. vLLM allocates whole blocks
of tokens (block_size 16 by default, vllm/config/cache.py); the default of 1 counts tokens exactly.
Sliding-window layers (Mistral, Gemma-2) keep at most their window (plus one block) of tokens, as
vLLM v1's hybrid KV cache manager and transformers' sliding-window cache do.

vLLM pre-allocates: the engine starts only if weights, the profiled activation peak, the CUDA
context and at least one request's KV blocks fit in gpu_memory_utilization (default 0.9,
vllm/engine/arg_utils.py) of the device; "fits" for --engine vllm is judged against that share.
"""

from rigcheck.memory.architecture import Architecture
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.units import ceil_div

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


def kv_cache_bytes(
    arch: Architecture, tokens: int, batch: int, element_bytes: int, block_tokens: int = 1
) -> int:
    """Bytes of K and V for `batch` sequences of `tokens` tokens each, in whole blocks."""
    full = ceil_div(tokens, block_tokens) * block_tokens
    # a window straddles block boundaries: vLLM keeps one block more than the window
    extra = block_tokens if block_tokens > 1 else 0
    window = min(tokens, arch.sliding_window + extra) if arch.sliding_window else tokens
    windowed = ceil_div(window, block_tokens) * block_tokens
    layer_tokens = (arch.layers - arch.sliding_layers) * full + arch.sliding_layers * windowed
    return 2 * arch.kv_width * layer_tokens * batch * element_bytes


def inference_activation_bytes(
    arch: Architecture, tokens: int, batch: int, element_bytes: int
) -> int:
    """The transient peak of one layer during prefill, plus fp32 logits of the last position.

    An estimate, not a bound: residual and normed input, then the wider of the attention
    projections (flash attention, no s x s scores) and the MLP intermediates. Nothing is kept
    across layers without a backward pass.
    """
    widest_attention = 2 * arch.q_width + 2 * arch.kv_width
    widest_mlp = (3 if arch.gated_mlp else 2) * arch.token_mlp_width
    per_token = 2 * arch.hidden + max(widest_attention, widest_mlp)
    return element_bytes * tokens * batch * per_token + 4 * batch * arch.vocab
