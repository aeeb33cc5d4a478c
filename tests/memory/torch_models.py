"""Small real torch models built from an Architecture, for the real-tensor checks.

`Decoder` has exactly the parameter tensors tensor_groups() lists (same shapes, tied lm_head,
learned positions when the architecture has them) and a real forward pass: causal attention with
GQA, gated or plain MLP, RMS or LayerNorm, dropout where the architecture has it. `PaperLayer` is
the layer Korthikanti et al. count, written out op by op, for measuring saved activations.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from rigcheck.memory.architecture import Architecture


def saved_bytes(module, forward) -> int:
    """Bytes of the distinct storages autograd saves for backward during forward(): one count
    per storage (views share one), the module's parameters excluded."""
    params = {p.untyped_storage().data_ptr() for p in module.parameters()}
    saved: dict[int, int] = {}

    def pack(t):
        storage = t.untyped_storage()
        if storage.data_ptr() not in params:
            saved[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        forward()
    return sum(saved.values())


DROPOUT = 0.1


def _norm(arch: Architecture, dtype: torch.dtype) -> nn.Module:
    if arch.norm == "layer":
        return nn.LayerNorm(arch.hidden, dtype=dtype)
    return nn.RMSNorm(arch.hidden, dtype=dtype)


class Block(nn.Module):
    """One decoder layer."""

    def __init__(self, arch: Architecture, dtype: torch.dtype):
        super().__init__()
        self.arch = arch
        h, qkv_bias, bias = arch.hidden, arch.bias != "none", arch.bias == "all"
        widths = (arch.q_width, arch.kv_width, arch.kv_width)
        if arch.fused_qkv:
            self.qkv = nn.Linear(h, sum(widths), bias=qkv_bias, dtype=dtype)
        else:
            self.q, self.k, self.v = (nn.Linear(h, w, bias=qkv_bias, dtype=dtype) for w in widths)
        self.o = nn.Linear(arch.q_width, h, bias=bias, dtype=dtype)
        if arch.gated_mlp:
            self.gate = nn.Linear(h, arch.mlp_width, bias=bias, dtype=dtype)
        self.up = nn.Linear(h, arch.mlp_width, bias=bias, dtype=dtype)
        self.down = nn.Linear(arch.mlp_width, h, bias=bias, dtype=dtype)
        self.norm1, self.norm2 = _norm(arch, dtype), _norm(arch, dtype)
        self.p = DROPOUT if arch.dropout else 0.0

    def _qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a = self.arch
        if a.fused_qkv:
            return self.qkv(x).split((a.q_width, a.kv_width, a.kv_width), dim=-1)
        return self.q(x), self.k(x), self.v(x)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        a, (b, s, _) = self.arch, x.shape
        q, k, v = (t.view(b, s, -1, a.dim).transpose(1, 2) for t in self._qkv(x))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.o(out.transpose(1, 2).reshape(b, s, a.q_width))

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        if self.arch.gated_mlp:
            return self.down(F.silu(self.gate(x)) * self.up(x))
        return self.down(F.gelu(self.up(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + F.dropout(self.attention(self.norm1(x)), self.p, self.training)
        return x + F.dropout(self.mlp(self.norm2(x)), self.p, self.training)


class Decoder(nn.Module):
    """A decoder-only language model with the architecture's exact parameter tensors."""

    def __init__(self, arch: Architecture, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.embed_tokens = nn.Embedding(arch.vocab, arch.hidden, dtype=dtype)
        if arch.positions:
            self.embed_positions = nn.Embedding(arch.positions, arch.hidden, dtype=dtype)
        self.layers = nn.ModuleList(Block(arch, dtype) for _ in range(arch.layers))
        self.final_norm = _norm(arch, dtype)
        self.lm_head = nn.Linear(arch.hidden, arch.vocab, bias=False, dtype=dtype)
        if arch.tied_embeddings:
            self.lm_head.weight = self.embed_tokens.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed_tokens(tokens)
        if hasattr(self, "embed_positions"):
            x = x + self.embed_positions(torch.arange(tokens.shape[1]))
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.final_norm(x)).float()


def next_token_loss(model: Decoder, vocab: int, batch: int = 2, seq: int = 8) -> torch.Tensor:
    """Cross-entropy of predicting each next token of random sequences."""
    tokens = torch.randint(0, vocab, (batch, seq + 1))
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))


class PaperLayer(nn.Module):
    """Korthikanti et al.'s transformer layer, op by op: LayerNorm, MHA with explicit softmax and
    dropout on the scores, GELU MLP of width 4h, dropout after attention and MLP."""

    def __init__(self, hidden: int, heads: int, dtype: torch.dtype, flash: bool = False):
        super().__init__()
        self.heads, self.flash = heads, flash
        self.norm1, self.norm2 = (nn.LayerNorm(hidden, dtype=dtype) for _ in range(2))
        self.qkv = nn.Linear(hidden, 3 * hidden, dtype=dtype)
        self.o = nn.Linear(hidden, hidden, dtype=dtype)
        self.up = nn.Linear(hidden, 4 * hidden, dtype=dtype)
        self.down = nn.Linear(4 * hidden, hidden, dtype=dtype)

    def core_attention(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self.flash:  # torch's CPU flash kernel: no s x s scores kept, no attention dropout
            return F.scaled_dot_product_attention(q, k, v)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        probs = F.dropout(torch.softmax(scores, dim=-1), DROPOUT, self.training)
        return torch.matmul(probs, v)

    def forward(self, x: torch.Tensor, recompute: str = "none") -> torch.Tensor:
        if recompute == "full":
            return torch.utils.checkpoint.checkpoint(self._forward, x, "none", use_reentrant=True)
        return self._forward(x, recompute)

    def _forward(self, x: torch.Tensor, recompute: str) -> torch.Tensor:
        b, s, h = x.shape
        q, k, v = (
            t.view(b, s, self.heads, -1).transpose(1, 2)
            for t in self.qkv(self.norm1(x)).chunk(3, -1)
        )
        if recompute == "selective":
            out = torch.utils.checkpoint.checkpoint(
                self.core_attention, q, k, v, use_reentrant=True
            )
        else:
            out = self.core_attention(q, k, v)
        x = x + F.dropout(self.o(out.transpose(1, 2).reshape(b, s, h)), DROPOUT, self.training)
        return x + F.dropout(self.down(F.gelu(self.up(self.norm2(x)))), DROPOUT, self.training)
