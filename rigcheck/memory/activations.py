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

What transformers 5.23 really saves, beyond the paper (measured with saved_tensors_hooks on its
Llama, Mistral and Qwen3 decoder layers, to the byte: tests/memory/test_real_hf_activations.py):
- RMSNorm (LlamaRMSNorm and its copies) upcasts its input to fp32 and keeps that copy and the fp32
  rsqrt per row, besides the normalised input to its weight: 4h + 4 bytes per token per norm
  more than the paper's one norm input.
- q/k norms (Qwen3, Gemma-3) are RMSNorms over each head: per token, for q and for k of width w
  with r heads, an fp32 copy (4w), the normalised input to the weight (e x w) and r fp32 rsqrts.
- eager attention (eager_attention_forward, in the RMSNorm families) takes the softmax in fp32
  and casts it back: a x s x s
  x (4 + e) bytes (4 when e is 4: the cast is a no-op), and multiplies with K and V repeated to
  every query head (repeat_kv): K and V saved at q's width, not kv's.
- rotary cos and sin (e x head_dim each per token) are computed once per model and shared by every
  layer: counted once, with the output layers.
- Gemma's RMSNorm (Gemma 1-3) keeps its normalised input in fp32 ((4 - e) h more per norm), and
  Gemma-2/3's post-attention and post-feedforward norms keep an fp32 copy, the fp32 normalised
  input and the rsqrt (8h + 4); its q/k norms 8w + 4r. Each norm also keeps (1 + w) in fp32, a
  few KiB per layer whatever the batch: not counted. Gemma-2's soft-capped eager attention keeps
  the tanh output too (a x s x s x e).
The paper's layer (an architecture with dropout: GPT-2 and the paper's own) keeps the paper's terms
and none of these.

Not counted (the trace answers for these families when transformers is installed): a mixture of
experts layer run by transformers' default grouped_mm experts keeps, per token, two routed h-wide
copies (4kh bytes at 16 bit), the router's fp32 probabilities (4E), and per routed slot int64
top-k and permutation indices and the routing weight (34k; Mixtral 40k + 4; Qwen2-MoE's shared
expert 2h + 2 more): measured to the byte on small layers (tests/memory/test_trace.py MOE_GAP);
at Qwen3-30B-A3B's shape (h 2048, k 8, E 128) that is 66,320 bytes per token per layer.

The figure used for a fit is the peak: the stored activations plus, under recomputation, the one
layer being recomputed in the backward pass. Under LoRA the same figure is an upper bound: frozen
matrices need not keep their inputs.
"""

from dataclasses import dataclass, replace

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
    """h-wide tensors each TP rank holds whole: two norm inputs, QKV and MLP inputs, masks;
    an RMSNorm's fp32 input copy and rsqrt."""
    sbh = c.seq * c.batch * arch.hidden
    masks = 2 * sbh if arch.dropout else 0  # after the output projection and after the MLP
    return 4 * c.element_bytes * sbh + masks + _norm_copies(arch, c)


def _norm_copies(arch: Architecture, c: ActivationConfig) -> int:
    """What transformers' RMSNorms keep beyond the paper's norm inputs (see the docstring)."""
    if not _transformers_rms(arch):
        return 0
    sb, sbh = c.seq * c.batch, c.seq * c.batch * arch.hidden
    copies = 2 * (4 * sbh + 4 * sb)  # the two pre-norms: fp32 input copy and rsqrt
    if arch.norm == "gemma":
        post_norms = arch.norms_per_layer - 2
        copies += 2 * (4 - c.element_bytes) * sbh + post_norms * (8 * sbh + 4 * sb)
    return copies


def _transformers_rms(arch: Architecture) -> bool:
    """An RMSNorm as transformers writes it (the paper's layer, with dropout, has LayerNorm)."""
    return arch.norm in ("rms", "gemma") and not arch.dropout


def _split(arch: Architecture, c: ActivationConfig) -> int:
    """Tensors TP splits by heads or MLP columns: Q, K, V, attention output, MLP intermediates."""
    sb, e = c.seq * c.batch, c.element_bytes
    attention = e * sb * (2 * arch.q_width + 2 * arch.kv_width)
    mlp = (4 if arch.gated_mlp else 2) * e * sb * arch.token_mlp_width
    return attention + mlp + _qk_norms(arch, c)


def _qk_norms(arch: Architecture, c: ActivationConfig) -> int:
    """Per-head RMSNorms on q and k: fp32 copy, normalised input to the weight, fp32 rsqrt."""
    if not arch.qk_norm:
        return 0
    width, rows = arch.q_width + arch.kv_width, arch.heads + arch.kv_heads
    normalised = 4 if arch.norm == "gemma" else c.element_bytes  # Gemma keeps it in fp32
    return c.seq * c.batch * ((4 + normalised) * width + 4 * rows)


def _scores(arch: Architecture, c: ActivationConfig) -> int:
    """The a x s x s attention terms: softmax output, dropout mask and output; flash keeps none."""
    if c.attention == "flash":
        return 4 * arch.heads * c.seq * c.batch  # fp32 logsumexp
    scores = arch.heads * c.seq * c.seq * c.batch
    if arch.dropout:  # the paper's layer: softmax output, dropout mask and output
        return scores * (2 * c.element_bytes + 1)
    if not _transformers_rms(arch):  # GPT-2 style without dropout: the softmax output only
        return scores * c.element_bytes
    # transformers' eager attention: fp32 softmax and its cast; K and V repeated to every head
    softmax = 4 + (c.element_bytes if c.element_bytes != 4 else 0)
    softmax += c.element_bytes if arch.attn_softcap else 0  # Gemma-2: tanh's output
    repeated = 2 * c.element_bytes * c.seq * c.batch * (arch.q_width - arch.kv_width)
    return scores * softmax + repeated


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
    """Embedding dropout mask, final norm and lm_head inputs, fp32 logits (paper sec. 4.3);
    in transformers also the final RMSNorm's copies, the int64 token ids the embedding keeps and
    the int64 shifted labels the loss keeps, and the rotary cos/sin every layer shares (counted
    per sequence of the batch: an upper bound, as transformers broadcasts one over the batch)."""
    sb = c.seq * c.batch
    mask = sb * arch.hidden if arch.dropout else 0
    head = mask + 2 * c.element_bytes * sb * arch.hidden + 4 * sb * arch.vocab
    if arch.dropout:
        return ceil_div(head, c.tp)
    rotary = 0 if arch.positions else 2 * c.element_bytes * sb * arch.dim
    final_norm = _norm_copies(replace(arch, norms_per_layer=2), c) // 2  # one pre-norm's share
    return ceil_div(head, c.tp) + rotary + final_norm + 2 * 8 * sb


def stored_activation_bytes(arch: Architecture, c: ActivationConfig) -> int:
    """What the paper counts: every layer's stored activations plus the output layers'."""
    return arch.layers * layer_activation_bytes(arch, c) + head_activation_bytes(arch, c)


def activation_bytes(arch: Architecture, c: ActivationConfig) -> int:
    """Peak activations: stored, plus the layer being recomputed when recomputation is on."""
    recomputed = layer_activation_bytes(arch, _no_recompute(c)) - layer_activation_bytes(arch, c)
    return stored_activation_bytes(arch, c) + recomputed


def _no_recompute(c: ActivationConfig) -> ActivationConfig:
    return ActivationConfig(c.seq, c.batch, c.element_bytes, "none", c.attention, c.tp, c.sp)
