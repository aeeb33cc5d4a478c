"""Training activations, after Korthikanti et al. 2022 ("Reducing Activation Recomputation in
Large Transformer Models", sections 4-5), generalised term by term.

The paper's layer (16-bit activations, 1-byte dropout masks, MHA, MLP width 4h) stores
s*b*h*(34 + 5*a*s/h) bytes. Counting the same saved tensors for any element size e, GQA (K and V
of kv_width), an MLP of width f, gated (SwiGLU saves gate, up, act(gate), and their product) or
not, and with or without dropout gives the terms below; for the paper's layer they reduce to its
formula exactly (tests/memory/test_activations.py). Tensor parallelism t splits the heads and MLP
columns; sequence parallelism also splits the h-wide tensors. Selective recompute drops the
attention scores; full recompute keeps only each layer's input; flash attention never stores the
s x s scores (it keeps an fp32 logsumexp per head and row instead).

The figure used for a fit is the peak: the stored activations plus, under recomputation, the one
layer being recomputed in the backward pass. Under LoRA the same figure is an upper bound: frozen
matrices need not keep their inputs.
"""

from dataclasses import dataclass

from rigcheck.memory.architecture import Architecture
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.units import ceil_div

RECOMPUTE = ("none", "selective", "full")
ATTENTION = ("eager", "flash")


@dataclass(frozen=True)
class ActivationConfig:
    """What activations depend on besides the architecture."""

    seq: int
    batch: int  # micro-batch per GPU
    element_bytes: int = 2
    recompute: str = "none"
    attention: str = "eager"
    tp: int = 1  # tensor-parallel degree
    sp: bool = False  # sequence parallelism (with tp)

    def __post_init__(self) -> None:
        if min(self.seq, self.batch, self.element_bytes, self.tp) < 1:
            raise ConfigError("activations: seq, batch, element size and tp must be >= 1")
        if self.recompute not in RECOMPUTE or self.attention not in ATTENTION:
            raise ConfigError(f"activations: recompute in {RECOMPUTE}, attention in {ATTENTION}")


def _replicated(arch: Architecture, c: ActivationConfig) -> int:
    """h-wide tensors each TP rank holds whole: two norm inputs, QKV and MLP inputs, masks."""
    sbh = c.seq * c.batch * arch.hidden
    masks = 2 * sbh if arch.dropout else 0  # after the output projection and after the MLP
    return 4 * c.element_bytes * sbh + masks


def _split(arch: Architecture, c: ActivationConfig) -> int:
    """Tensors TP splits by heads or MLP columns: Q, K, V, attention output, MLP intermediates."""
    sb, e = c.seq * c.batch, c.element_bytes
    attention = e * sb * (2 * arch.q_width + 2 * arch.kv_width)
    mlp = (4 if arch.gated_mlp else 2) * e * sb * arch.token_mlp_width
    return attention + mlp


def _scores(arch: Architecture, c: ActivationConfig) -> int:
    """The a x s x s attention terms: softmax output, dropout mask and output; flash keeps none."""
    if c.attention == "flash":
        return 4 * arch.heads * c.seq * c.batch  # fp32 logsumexp
    per_score = c.element_bytes + (1 + c.element_bytes if arch.dropout else 0)
    return arch.heads * c.seq * c.seq * c.batch * per_score


def layer_activation_bytes(arch: Architecture, c: ActivationConfig) -> int:
    """Bytes one decoder layer stores for the backward pass, per GPU."""
    if c.recompute == "full":
        return ceil_div(c.element_bytes * c.seq * c.batch * arch.hidden, c.tp if c.sp else 1)
    scores = 0 if c.recompute == "selective" else _scores(arch, c)
    replicated, split = _replicated(arch, c), _split(arch, c)
    if c.sp:
        return ceil_div(replicated + split + scores, c.tp)
    return replicated + ceil_div(split + scores, c.tp)


def head_activation_bytes(arch: Architecture, c: ActivationConfig) -> int:
    """Embedding dropout mask, final norm and lm_head inputs, fp32 logits (paper sec. 4.3)."""
    sb = c.seq * c.batch
    mask = sb * arch.hidden if arch.dropout else 0
    return ceil_div(mask + 2 * c.element_bytes * sb * arch.hidden + 4 * sb * arch.vocab, c.tp)


def stored_activation_bytes(arch: Architecture, c: ActivationConfig) -> int:
    """What the paper counts: every layer's stored activations plus the output layers'."""
    return arch.layers * layer_activation_bytes(arch, c) + head_activation_bytes(arch, c)


def activation_bytes(arch: Architecture, c: ActivationConfig) -> int:
    """Peak activations: stored, plus the layer being recomputed when recomputation is on."""
    recomputed = layer_activation_bytes(arch, _no_recompute(c)) - layer_activation_bytes(arch, c)
    return stored_activation_bytes(arch, c) + recomputed


def _no_recompute(c: ActivationConfig) -> ActivationConfig:
    return ActivationConfig(c.seq, c.batch, c.element_bytes, "none", c.attention, c.tp, c.sp)
