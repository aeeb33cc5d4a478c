"""A decoder-only transformer's shape, and every parameter tensor it implies.

The tensor list is the single source for the parameter count, for the per-tensor optimizer rules
(8-bit Adam's small-tensor rule, Adafactor's factored matrices) and for LoRA/QLoRA, so a count
that matches the published one also pins the shapes those rules see.
"""

from dataclasses import dataclass

from rigcheck.memory.errors import ConfigError

NORMS = ("rms", "layer", "gemma")  # gemma: an RMSNorm that keeps its output in fp32, (1 + w)
BIASES = ("none", "qkv", "attn", "all")  # attn: q, k, v, o (Llama's attention_bias)


@dataclass(frozen=True)
class Architecture:
    """The hyperparameters that fix a decoder-only transformer's parameter tensors."""

    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int  # = heads for multi-head attention, 1 for multi-query, between for GQA
    mlp_width: int
    gated_mlp: bool = True  # SwiGLU (gate, up, down) as in Llama; False: up, down as in GPT-2
    tied_embeddings: bool = False  # lm_head shares the input embedding matrix
    norm: str = "rms"  # "rms": a weight per norm; "layer": weight and bias
    bias: str = "none"  # "qkv": biases on q, k, v only (Qwen2); "all": every linear (GPT-2)
    positions: int = 0  # learned absolute position embeddings (GPT-2: 1024); 0 with rotary
    fused_qkv: bool = False  # one h x 3h matrix (GPT-2's c_attn): same count, different LoRA
    fused_gate_up: bool = False  # one 2f x h matrix (Phi-3's gate_up_proj): same count
    dropout: bool = False  # dropout layers in training (GPT-2): 1-byte masks in activations
    head_dim: int = 0  # 0: hidden // heads
    max_positions: int = 0  # max_position_embeddings; 0: unknown (no sequence-length check)
    norms_per_layer: int = 2  # Gemma-2/3: 4 (pre/post attention and feed-forward norms)
    qk_norm: bool = False  # a head_dim-wide RMSNorm on queries and keys (Qwen3, Gemma-3)
    mlp_bias: bool = False  # biases on the MLP matrices (Llama's mlp_bias)
    sliding_window: int = 0  # tokens a sliding-window layer attends to (and caches); 0: none
    sliding_layers: int = 0  # how many layers use the window (Mistral: all; Gemma-2: half)
    # Mixture of experts (Mixtral, Qwen2-MoE): routed experts per MoE layer, their MLP width,
    # a shared expert's width (Qwen2-MoE, with a 1-wide sigmoid gate), experts each token uses,
    # and the layers that keep a dense MLP of mlp_width instead (Qwen2-MoE's mlp_only_layers).
    experts: int = 0
    # A pre-quantized checkpoint's format (checkpoint_formats.CheckpointFormat), None for 16 bit.
    checkpoint: object = None
    attn_softcap: bool = False  # Gemma-2's tanh soft-capping of the attention logits
    shared_expert_gate: bool = True  # Qwen2-MoE's 1-wide gate on its shared expert; DeepSeek: none
    # Multi-head latent attention (DeepSeek-V2/V3), on when kv_lora_rank > 0: queries through a
    # q_lora_rank bottleneck (0: one q_proj), keys and values from one kv_lora_rank latent plus a
    # rope_head_dim key shared by every head; head_dim is then the no-rope part of a query head.
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    rope_head_dim: int = 0
    v_head_dim: int = 0
    expert_mlp_width: int = 0
    shared_expert_width: int = 0
    experts_per_token: int = 0
    dense_layers: int = 0
    # config.json's top-level model_type ("" for a shape written by hand): PEFT keys its default
    # LoRA targets by it (peft_defaults), a multimodal wrapper's type, not its text model's.
    model_type: str = ""

    def __post_init__(self) -> None:
        for name in ("vocab", "hidden", "layers", "heads", "kv_heads", "mlp_width"):
            if getattr(self, name) < 1:
                raise ConfigError(f"architecture: {name} must be >= 1, got {getattr(self, name)}")
        if self.heads % self.kv_heads:
            raise ConfigError(
                f"architecture: heads ({self.heads}) must be a multiple of kv_heads "
                f"({self.kv_heads})"
            )
        if self.norm not in NORMS or self.bias not in BIASES:
            raise ConfigError(f"architecture: norm in {NORMS}, bias in {BIASES}")
        if self.head_dim < 0 or (self.head_dim == 0 and self.hidden % self.heads):
            raise ConfigError("architecture: give head_dim when hidden is not a multiple of heads")
        if self.experts and not (0 < self.experts_per_token <= self.experts):
            raise ConfigError("architecture: experts_per_token must be between 1 and experts")
        if not 0 <= self.dense_layers <= self.layers or self.sliding_layers > self.layers:
            raise ConfigError("architecture: dense_layers and sliding_layers must be <= layers")

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts."""
        return self.layers - self.dense_layers if self.experts else 0

    @property
    def token_mlp_width(self) -> int:
        """MLP width one token passes through: the routed experts it goes to and any shared
        expert under MoE (for activations; dense-MLP layers of an MoE model are not told apart)."""
        if not self.experts:
            return self.mlp_width
        routed = (self.expert_mlp_width or self.mlp_width) * self.experts_per_token
        return routed + self.shared_expert_width

    @property
    def mlp_layers(self) -> int:
        """Layers with a dense MLP of mlp_width."""
        return self.layers - self.moe_layers

    @property
    def dim(self) -> int:
        """Per-head dimension."""
        return self.head_dim or self.hidden // self.heads

    @property
    def mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3)."""
        return self.kv_lora_rank > 0

    @property
    def q_width(self) -> int:
        """Width of the query projection's output (heads x head_dim; MLA: with the rope part)."""
        return self.heads * (self.dim + self.rope_head_dim)

    @property
    def kv_cache_width(self) -> int:
        """Elements one layer caches per token: K and V of every KV head; MLA: the latent and
        the shared rope key, once for all heads (vLLM MLAAttentionSpec, one "head" of
        kv_lora_rank + qk_rope_head_dim)."""
        return self.kv_lora_rank + self.rope_head_dim if self.mla else 2 * self.kv_width

    @property
    def kv_width(self) -> int:
        """Width of the key (and of the value) projection's output (kv_heads x head_dim)."""
        return self.kv_heads * self.dim


@dataclass(frozen=True)
class TensorGroup:
    """`count` parameter tensors of one shape and role (e.g. every layer's q_proj weight)."""

    name: str
    shape: tuple[int, ...]
    count: int
    role: str  # embedding, position, lm_head, linear, bias, norm, adapter, flat

    @property
    def numel(self) -> int:
        """Elements in one tensor of the group."""
        n = 1
        for size in self.shape:
            n *= size
        return n

    @property
    def total(self) -> int:
        """Elements in all tensors of the group."""
        return self.numel * self.count


@dataclass(frozen=True)
class Linear:
    """A decoder-layer matrix LoRA can target: y = x W^T with W of shape (d_out, d_in)."""

    name: str
    d_in: int
    d_out: int


def _mla_linears(arch: Architecture) -> list[Linear]:
    """DeepSeek's attention (transformers 5.23 DeepseekV3Attention): q_a/q_b (or q),
    kv_a_proj_with_mqa, kv_b (no-rope keys and values of every head from the latent), o."""
    h, q, latent = arch.hidden, arch.q_width, arch.kv_lora_rank
    if arch.q_lora_rank:
        out = [Linear("q_a", h, arch.q_lora_rank), Linear("q_b", arch.q_lora_rank, q)]
    else:
        out = [Linear("q", h, q)]
    out.append(Linear("kv_a", h, latent + arch.rope_head_dim))
    out.append(Linear("kv_b", latent, arch.heads * (arch.dim + arch.v_head_dim)))
    return [*out, Linear("o", arch.heads * arch.v_head_dim, h)]


def linears(arch: Architecture) -> tuple[Linear, ...]:
    """The matrices of one decoder layer, by canonical name."""
    h, f = arch.hidden, arch.mlp_width
    if arch.mla:
        attention = _mla_linears(arch)
    elif arch.fused_qkv:
        attention = [Linear("qkv", h, arch.q_width + 2 * arch.kv_width)]
    else:
        attention = [Linear(n, h, w) for n, w in (("q", arch.q_width), ("k", arch.kv_width))]
        attention.append(Linear("v", h, arch.kv_width))
    if not arch.mla:
        attention.append(Linear("o", arch.q_width, h))
    if arch.gated_mlp and arch.fused_gate_up:
        mlp = [Linear("gate_up", h, 2 * f)]
    else:
        mlp = [Linear("gate", h, f)] if arch.gated_mlp else []
        mlp.append(Linear("up", h, f))
    mlp.append(Linear("down", f, h))
    return (*attention, *mlp)


ATTENTION_LINEARS = ("q", "k", "v", "qkv", "o", "q_a", "q_b", "kv_a", "kv_b")
_BIASED = {"none": (), "qkv": ("q", "k", "v", "qkv"), "attn": ATTENTION_LINEARS}


def _count(arch: Architecture, m: Linear) -> int:
    """Layers holding matrix m: every layer for attention, the dense-MLP layers for the MLP."""
    return arch.layers if m.name in ATTENTION_LINEARS else arch.mlp_layers


def _layer_biases(arch: Architecture) -> list[TensorGroup]:
    groups = []
    for m in linears(arch):
        attention = m.name in ATTENTION_LINEARS
        if arch.bias == "all" or m.name in _BIASED[arch.bias] or (arch.mlp_bias and not attention):
            groups.append(TensorGroup(f"layers.{m.name}.bias", (m.d_out,), _count(arch, m), "bias"))
    return [g for g in groups if g.count]


def _experts(arch: Architecture) -> list[TensorGroup]:
    """Router, routed experts (gate, up, down each) and the shared expert of every MoE layer."""
    h, n, e = arch.hidden, arch.moe_layers, arch.expert_mlp_width or arch.mlp_width
    if not n:
        return []
    groups = [TensorGroup("layers.router.weight", (arch.experts, h), n, "router")]
    for name, shape in (("gate", (e, h)), ("up", (e, h)), ("down", (h, e))):
        groups.append(TensorGroup(f"layers.experts.{name}", shape, n * arch.experts, "expert"))
    if arch.shared_expert_width:
        s = arch.shared_expert_width
        for name, shape in (("gate", (s, h)), ("up", (s, h)), ("down", (h, s))):
            groups.append(TensorGroup(f"layers.shared_expert.{name}", shape, n, "linear"))
        # an nn.Linear(h, 1), unlike the router: bitsandbytes quantizes it
        if arch.shared_expert_gate:
            groups.append(TensorGroup("layers.shared_expert_gate.weight", (1, h), n, "linear"))
    return groups


def _norms(arch: Architecture, prefix: str, count: int) -> list[TensorGroup]:
    parts = ("weight", "bias") if arch.norm == "layer" else ("weight",)
    return [TensorGroup(f"{prefix}.{p}", (arch.hidden,), count, "norm") for p in parts]


def tensor_groups(arch: Architecture) -> tuple[TensorGroup, ...]:
    """Every parameter tensor of the model, grouped by shape and role."""
    h, L = arch.hidden, arch.layers
    groups = [TensorGroup("embed_tokens", (arch.vocab, h), 1, "embedding")]
    if arch.positions:
        groups.append(TensorGroup("embed_positions", (arch.positions, h), 1, "position"))
    for m in linears(arch):
        groups.append(
            TensorGroup(f"layers.{m.name}.weight", (m.d_out, m.d_in), _count(arch, m), "linear")
        )
    groups = [g for g in groups if g.count] + _layer_biases(arch) + _experts(arch)
    for i in range(arch.norms_per_layer):
        groups += _norms(arch, f"layers.norm{i + 1}", L)
    if arch.qk_norm:
        groups += [TensorGroup(f"layers.{n}_norm.weight", (arch.dim,), L, "norm") for n in "qk"]
    if arch.mla:  # RMSNorms on the two latents
        latents = (("q_a", arch.q_lora_rank), ("kv_a", arch.kv_lora_rank))
        groups += [TensorGroup(f"layers.{n}_norm", (w,), L, "norm") for n, w in latents if w]
    groups += _norms(arch, "final_norm", 1)
    if not arch.tied_embeddings:
        groups.append(TensorGroup("lm_head", (arch.vocab, h), 1, "lm_head"))
    return tuple(groups)


def parameter_count(arch: Architecture) -> int:
    """Total parameters, counting a tied embedding matrix once (as torch's parameters() does)."""
    return sum(g.total for g in tensor_groups(arch))


def active_parameter_count(arch: Architecture) -> int:
    """Parameters one token uses: all but the routed experts it is not sent to."""
    idle = arch.experts - arch.experts_per_token
    per_expert = sum(g.numel for g in tensor_groups(arch) if g.role == "expert")
    return parameter_count(arch) - arch.moe_layers * idle * per_expert


def largest_layer_params(arch: Architecture) -> int:
    """Parameters of the largest single module (its weight and bias), as DeepSpeed's
    model_to_params counts it (deepspeed/runtime/zero/stage3.py, 0.19.8): what ZeRO-3 gathers.
    transformers 5 keeps a layer's routed experts as one module holding two 3-D parameters
    (gate_up_proj and down_proj), so all of a layer's experts are one unit."""
    groups = tensor_groups(arch)
    sizes = [g.numel for g in groups if g.role != "expert"]
    experts = sum(g.numel for g in groups if g.role == "expert") * arch.experts
    return max([*sizes, experts])
