"""The cache-bearing layers of hybrid and chunked-attention families, read from config.json, for
`rigcheck fit --inference` where the formulas have no Architecture (the trace counts the weights).

Falcon-H1 (every layer runs attention and a Mamba2 mixer side by side), Jamba (Mamba1 layers, one
attention layer every attn_layer_period), Granite-4 hybrids (granitemoehybrid: layer_types of
"mamba" and "attention") and Llama-4 (RoPE layers use chunked local attention, the NoPE layers
full attention).

What vLLM keeps per Mamba layer and request (vllm/model_executor/layers/mamba/mamba_utils.py,
vllm-project/vllm at commit 02d71083, MambaStateShapeCalculator):
- mamba2: conv state (conv_kernel - 1) x (intermediate + 2 x n_groups' x d_state) / tp, ssm state
  (n_heads / tp) x head_dim x d_state; n_groups' = n_groups rounded up to tp when tp does not
  divide it (extra_groups_for_head_shards).
- mamba1: conv state (conv_kernel - 1) x intermediate / tp, ssm state intermediate / tp x d_state.
Both in the model's dtype by default (mamba_cache_dtype and mamba_ssm_cache_dtype "auto":
_mamba_state_dtype, same file). The config fields each model reads (get_mamba_state_shape_from_
config): Falcon-H1 intermediate = mamba_d_ssm, else mamba_expand x hidden_size; Granite-4
mamba_expand x hidden_size, heads mamba_n_heads x mamba_d_head (both read in copies of vLLM's
falcon_h1.py and granitemoehybrid.py in the code index); Jamba mamba_expand x hidden_size,
mamba_d_state, mamba_d_conv (jamba.py, likewise).
Llama-4: use_chunked_local_attn = not nope and attention_chunk_size (vllm llama4.py), nope where
transformers' no_rope_layers holds 0 (default: every no_rope_layer_interval-th layer, 4).

The attention-only families the formulas have no Architecture for: OLMo-2 and GLM-4 (every layer
full attention), gpt-oss (layer_types alternating "sliding_attention" (sliding_window tokens, 128)
and "full_attention"; without layer_types the even layers slide). vLLM's gpt_oss.py passes
`per_layer_sliding_window = config.sliding_window if layer_idx % 2 == 0 else None` (read in a copy
in the code index, find_string id 32253450298, not at a named upstream commit), the same layers as
the released configs' layer_types. gpt-oss's attention sinks are one learned logit per head: a
parameter, no cached token.
"""

from dataclasses import dataclass
from math import prod

from rigcheck.memory.errors import ConfigError
from rigcheck.memory.units import ceil_div

FAMILIES = (
    "falcon_h1",
    "jamba",
    "granitemoehybrid",
    "llama4_text",
    "olmo2",
    "glm4",
    "gpt_oss",
    "granite",
    "smollm3",
    "qwen2_5_vl_text",
    "qwen2_5_vl",
)


@dataclass(frozen=True)
class Mamba:
    """One Mamba mixer's state dimensions (whole model, before tensor parallelism)."""

    kind: str  # "mamba1" or "mamba2"
    intermediate: int
    d_state: int
    conv_kernel: int
    n_groups: int = 0  # mamba2 only
    heads: int = 0
    head_dim: int = 0

    def shapes(self, tp: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(conv, ssm) state shapes on one of tp GPUs, as MambaStateShapeCalculator builds them."""
        if self.kind == "mamba1":
            return (self.conv_kernel - 1, _divide(self.intermediate, tp)), (
                _divide(self.intermediate, tp),
                self.d_state,
            )
        groups = self.n_groups + (0 if self.n_groups % tp == 0 else tp - self.n_groups)
        conv_dim = self.intermediate + 2 * groups * self.d_state
        return (self.conv_kernel - 1, _divide(conv_dim, tp)), (
            _divide(self.heads, tp),
            self.head_dim,
            self.d_state,
        )

    def state_bytes(self, tp: int, element_bytes: int) -> int:
        """One layer's state for one request: MambaSpec.page_size_bytes before padding."""
        return sum(prod(shape) * element_bytes for shape in self.shapes(tp))

    def hf_state_bytes(self, tp: int, element_bytes: int) -> int:
        """One layer's state for one request in transformers' cache (cache_utils.py
        LinearAttentionLayer, 5.23): the conv state keeps all conv_kernel columns in the model's
        dtype, the ssm state is fp32 (what the torch path of Falcon-H1, Granite-4 and Jamba hands
        it: measured in tests/memory/test_hf_hybrid_cache.py)."""
        (_, conv), ssm = self.shapes(tp)
        return self.conv_kernel * conv * element_bytes + prod(ssm) * 4

    @property
    def in_proj_width(self) -> int:
        """Outputs of the mixer's input projection per token (gate, x, B, C and dt for mamba2)."""
        if self.kind == "mamba1":
            return 2 * self.intermediate
        return 2 * self.intermediate + 2 * self.n_groups * self.d_state + self.heads


@dataclass(frozen=True)
class HybridLayers:
    """Which layers cache what, and the widths the inference activation estimate needs."""

    family: str
    layers: int
    full_layers: int  # full attention (KV grows with the request)
    chunked_layers: int  # chunked local attention (Llama-4)
    chunk: int
    mamba_layers: int
    mamba: Mamba | None
    kv_heads: int
    head_dim: int
    hidden: int
    heads: int
    mlp_width: int  # the widest MLP one token passes through (k experts + shared)
    vocab: int
    parallel_mixers: bool = False  # Falcon-H1: attention and Mamba in the same layer
    sliding_layers: int = 0  # sliding-window attention (gpt-oss), `window` tokens
    window: int = 0
    quantization: str = ""  # config.json's quantization_config quant_method, if any

    @property
    def attention_layers(self) -> int:
        return self.full_layers + self.chunked_layers + self.sliding_layers


def _divide(value: int, tp: int) -> int:
    """vllm.distributed.divide: the split must be exact."""
    if value % tp:
        raise ConfigError(f"{value} does not split over --tp {tp}: vLLM needs an exact split")
    return value // tp


def _int(config: dict, name: str, default: int | None = None) -> int:
    value = config.get(name)
    if value is None:
        if default is None:
            raise ConfigError(f"config.json has no {name} (needed for the {FAMILIES} cache)")
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"config.json: {name} must be a number, got {value!r}") from None


def from_config(config: dict) -> HybridLayers | None:
    """The layers of a hybrid or chunked-attention config; None for any other family."""
    wrapper = config.get("model_type")
    config = config.get("text_config") or config
    family = config.get("model_type") or wrapper  # a text_config may leave it out
    if family not in FAMILIES:
        return None
    layers, hidden = _int(config, "num_hidden_layers"), _int(config, "hidden_size")
    heads = _int(config, "num_attention_heads")
    common = dict(
        family=family,
        layers=layers,
        kv_heads=_int(config, "num_key_value_heads", heads),
        head_dim=_int(config, "head_dim", hidden // heads),
        hidden=hidden,
        heads=heads,
        vocab=_int(config, "vocab_size"),
        quantization=str((config.get("quantization_config") or {}).get("quant_method") or ""),
    )
    return {
        "falcon_h1": _falcon_h1,
        "jamba": _jamba,
        "granitemoehybrid": _granite,
        "llama4_text": _llama4,
        "olmo2": _full_attention,
        "glm4": _full_attention,
        "granite": _full_attention,
        "smollm3": _typed_attention,
        "qwen2_5_vl_text": _typed_attention,
        "qwen2_5_vl": _typed_attention,  # the released config.json: text fields at the top
        "gpt_oss": _gpt_oss,
    }[family](config, layers, hidden, common)


def _mlp(config: dict, width_name: str = "intermediate_size") -> int:
    experts_per_token = int(config.get("num_experts_per_tok") or 1)
    experts = config.get("num_local_experts") or config.get("num_experts") or 0
    width = _int(config, width_name, 0)
    return width * (experts_per_token if experts else 1)


def _falcon_h1(config: dict, layers: int, hidden: int, common: dict) -> HybridLayers:
    mamba = Mamba(
        "mamba2",
        _int(config, "mamba_d_ssm", int(config.get("mamba_expand", 2) * hidden)),
        _int(config, "mamba_d_state"),
        _int(config, "mamba_d_conv", 4),
        _int(config, "mamba_n_groups", 1),
        _int(config, "mamba_n_heads"),
        _int(config, "mamba_d_head"),
    )
    return HybridLayers(full_layers=layers, chunked_layers=0, chunk=0, mamba_layers=layers,
                        mamba=mamba, mlp_width=_mlp(config), parallel_mixers=True,
                        **common)  # fmt: skip


def _granite(config: dict, layers: int, hidden: int, common: dict) -> HybridLayers:
    types = config.get("layer_types") or ["mamba"] * layers
    mamba = Mamba(
        "mamba2",
        int(config.get("mamba_expand", 2) * hidden),
        _int(config, "mamba_d_state"),
        _int(config, "mamba_d_conv", 4),
        _int(config, "mamba_n_groups", 1),
        _int(config, "mamba_n_heads"),
        _int(config, "mamba_d_head"),
    )
    shared = _int(config, "shared_intermediate_size", 0)
    attention = sum(t == "attention" for t in types)
    return HybridLayers(full_layers=attention, chunked_layers=0, chunk=0,
                        mamba_layers=layers - attention, mamba=mamba,
                        mlp_width=_mlp(config) + shared, **common)  # fmt: skip


def _jamba(config: dict, layers: int, hidden: int, common: dict) -> HybridLayers:
    period, offset = _int(config, "attn_layer_period", 8), _int(config, "attn_layer_offset", 4)
    attention = sum(1 for i in range(layers) if i % period == offset)
    mamba = Mamba(
        "mamba1",
        int(config.get("mamba_expand", 2) * hidden),
        _int(config, "mamba_d_state", 16),
        _int(config, "mamba_d_conv", 4),
    )
    return HybridLayers(full_layers=attention, chunked_layers=0, chunk=0,
                        mamba_layers=layers - attention, mamba=mamba, mlp_width=_mlp(config),
                        **common)  # fmt: skip


def _llama4(config: dict, layers: int, hidden: int, common: dict) -> HybridLayers:
    rope = config.get("no_rope_layers") or [
        int((i + 1) % _int(config, "no_rope_layer_interval", 4) != 0) for i in range(layers)
    ]
    chunk = _int(config, "attention_chunk_size", 0)
    chunked = sum(1 for used in rope[:layers] if used) if chunk else 0
    moe = _mlp(config) + _int(config, "intermediate_size", 0)  # routed + the shared expert
    return HybridLayers(full_layers=layers - chunked, chunked_layers=chunked, chunk=chunk,
                        mamba_layers=0, mamba=None,
                        mlp_width=max(moe, _int(config, "intermediate_size_mlp", 0)),
                        **common)  # fmt: skip


def _full_attention(config: dict, layers: int, hidden: int, common: dict) -> HybridLayers:
    return HybridLayers(full_layers=layers, chunked_layers=0, chunk=0, mamba_layers=0,
                        mamba=None, mlp_width=_mlp(config), **common)  # fmt: skip


def _typed_attention(config: dict, layers: int, hidden: int, common: dict) -> HybridLayers:
    """SmolLM3 and Qwen2.5-VL's language model: full attention unless layer_types says a layer
    slides (transformers 5.23 writes layer_types into both configs; a use_sliding_window config
    without it would need transformers' own max_window_layers rule: refused, not guessed)."""
    if config.get("use_sliding_window") and not config.get("layer_types"):
        raise ConfigError("use_sliding_window without layer_types: add the layer_types list")
    return _sliding_by_type(config, layers, common, ["full_attention"] * layers)


def _gpt_oss(config: dict, layers: int, hidden: int, common: dict) -> HybridLayers:
    alternating = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(layers)]
    return _sliding_by_type(config, layers, common, alternating)


def _sliding_by_type(config: dict, layers: int, common: dict, default: list) -> HybridLayers:
    """Sliding-window layers where layer_types (else `default`) says sliding_attention."""
    types = config.get("layer_types") or default
    window = _int(config, "sliding_window", 0)
    sliding = sum(t == "sliding_attention" for t in types[:layers]) if window else 0
    return HybridLayers(full_layers=layers - sliding, chunked_layers=0, chunk=0, mamba_layers=0,
                        mamba=None, mlp_width=_mlp(config), sliding_layers=sliding,
                        window=window, **common)  # fmt: skip


def activation_bytes(
    hy: HybridLayers, tokens: int, batch: int, element_bytes: int, step_tokens: int
) -> int:
    """The transient peak of one layer in a prefill step, as inference.inference_activation_bytes
    estimates it for the families it knows: residual and normed input, then the widest of the
    attention projections, the Mamba input projection and the MLP (Falcon-H1 runs attention and
    Mamba side by side: their sum), plus fp32 logits of the last position."""
    attention = 2 * hy.heads * hy.head_dim + 2 * hy.kv_heads * hy.head_dim
    mixer = hy.mamba.in_proj_width if hy.mamba else 0
    mixers = attention + mixer if hy.parallel_mixers else max(attention, mixer)
    mlp = 3 * hy.mlp_width
    per_token = 2 * hy.hidden + max(mixers, mlp)
    in_flight = min(tokens * batch, step_tokens) if step_tokens else tokens * batch
    return element_bytes * in_flight * per_token + 4 * batch * hy.vocab


def check_parallel(hy: HybridLayers, par, gpus: int) -> None:
    """The tensor/pipeline layouts vLLM can serve these layers with; one line when not."""
    if min(par.tp, par.pp, par.ep, par.cp) < 1 or gpus % (par.tp * par.pp * par.cp):
        raise ConfigError(f"--gpus {gpus} is not a multiple of tp x pp x cp, each >= 1")
    if par.ep > 1 or par.cp > 1:
        raise ConfigError(f"{hy.family} inference: rigcheck models --tp and --pp only")
    if hy.heads % par.tp or par.pp > hy.layers:
        raise ConfigError(
            f"--tp {par.tp} must divide the {hy.heads} attention heads and --pp {par.pp} "
            f"must not exceed the {hy.layers} layers"
        )


# vLLM's --mamba-cache-mode (vllm/config/cache.py CacheConfig.mamba_cache_mode): "none" unless
# prefix caching is on, which vLLM leaves off for hybrid models by default (engine/arg_utils.py
# _set_default_args: "Disable prefix caching default for hybrid models"); with it on, "all"
# (models that support it) or "align" keep Mamba states at block boundaries. Only "none" is
# modelled.
MAMBA_CACHE_MODES = ("none", "align", "all")


def check_engine(hy: HybridLayers, engine: str, mamba_cache_mode: str) -> None:
    """What the figures would get wrong for these layers on this engine: refused in one line."""
    if hy.mamba_layers and mamba_cache_mode != "none":
        raise ConfigError(
            f"--mamba-cache-mode {mamba_cache_mode}: vLLM's prefix-caching Mamba states (kept at "
            "block boundaries) are not modelled; rigcheck answers for none, vLLM's default for "
            "hybrid models (prefix caching off)"
        )
    if engine == "hf" and hy.quantization == "mxfp4":
        raise ConfigError(
            "--engine hf with an MXFP4 checkpoint is not modelled: transformers keeps the experts "
            "in MXFP4 only with triton >= 3.4 and the kernels package on a GPU of compute "
            "capability >= 7.5, else dequantizes them to bf16 (quantizers/quantizer_mxfp4.py); "
            "--engine vllm is modelled"
        )


def per_gpu(hy: HybridLayers, pp: int) -> tuple[int, int, int, int]:
    """(full, chunked, mamba, sliding) layers on the most loaded pipeline stage."""
    counts = (hy.full_layers, hy.chunked_layers, hy.mamba_layers, hy.sliding_layers)
    return tuple(ceil_div(n, pp) for n in counts)


# MXFP4 (OCP Microscaling): 4-bit values with one 8-bit scale per 32 of them, 4.25 bits a
# parameter; gpt-oss ships its MoE expert weights so (OpenAI's gpt-oss model card: "MoE weights
# quantized to MXFP4 format, where weights are quantized to 4.25 bits per parameter") and vLLM
# serves them so; the rest stays at the working precision.
MXFP4_BITS_X4 = 17  # 4.25 bits, in quarter bits


def weights_bytes(hy: HybridLayers, total: int, experts: int, element: int) -> int:
    """The whole model's weight bytes: every parameter at `element` bytes, except the routed
    experts of an MXFP4 checkpoint (the expert biases the trace counts with them included)."""
    if hy.quantization != "mxfp4":
        return total * element
    return -(-experts * MXFP4_BITS_X4 // 32) + (total - experts) * element
