"""A decoder-only transformer's shape, and every parameter tensor it implies.

The tensor list is the single source for the parameter count, for the per-tensor optimizer rules
(8-bit Adam's small-tensor rule, Adafactor's factored matrices) and for LoRA/QLoRA, so a count
that matches the published one also pins the shapes those rules see.
"""

from dataclasses import dataclass

from rigcheck.memory.errors import ConfigError

NORMS = ("rms", "layer")
BIASES = ("none", "qkv", "all")


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
    dropout: bool = False  # dropout layers in training (GPT-2): 1-byte masks in activations
    head_dim: int = 0  # 0: hidden // heads

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

    @property
    def dim(self) -> int:
        """Per-head dimension."""
        return self.head_dim or self.hidden // self.heads

    @property
    def q_width(self) -> int:
        """Width of the query projection's output (heads x head_dim)."""
        return self.heads * self.dim

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


def linears(arch: Architecture) -> tuple[Linear, ...]:
    """The matrices of one decoder layer, by canonical name."""
    h, f = arch.hidden, arch.mlp_width
    if arch.fused_qkv:
        attention = [Linear("qkv", h, arch.q_width + 2 * arch.kv_width)]
    else:
        attention = [Linear(n, h, w) for n, w in (("q", arch.q_width), ("k", arch.kv_width))]
        attention.append(Linear("v", h, arch.kv_width))
    attention.append(Linear("o", arch.q_width, h))
    mlp = [Linear("gate", h, f)] if arch.gated_mlp else []
    mlp += [Linear("up", h, f), Linear("down", f, h)]
    return (*attention, *mlp)


def _layer_biases(arch: Architecture) -> list[TensorGroup]:
    L = arch.layers
    if arch.bias == "none":
        return []
    biased = [m for m in linears(arch) if m.name in ("q", "k", "v", "qkv") or arch.bias == "all"]
    return [TensorGroup(f"layers.{m.name}.bias", (m.d_out,), L, "bias") for m in biased]


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
        groups.append(TensorGroup(f"layers.{m.name}.weight", (m.d_out, m.d_in), L, "linear"))
    groups += _layer_biases(arch)
    groups += _norms(arch, "layers.norm1", L) + _norms(arch, "layers.norm2", L)
    groups += _norms(arch, "final_norm", 1)
    if not arch.tied_embeddings:
        groups.append(TensorGroup("lm_head", (arch.vocab, h), 1, "lm_head"))
    return tuple(groups)


def parameter_count(arch: Architecture) -> int:
    """Total parameters, counting a tied embedding matrix once (as torch's parameters() does)."""
    return sum(g.total for g in tensor_groups(arch))
