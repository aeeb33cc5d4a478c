"""Activations: Korthikanti et al.'s formulas, reproduced exactly, and their properties."""

from dataclasses import replace
from fractions import Fraction

from hypothesis import example, given
from hypothesis import strategies as st

from rigcheck.memory.activations import (
    ActivationConfig,
    activation_bytes,
    head_activation_bytes,
    layer_activation_bytes,
    stored_activation_bytes,
)
from rigcheck.memory.architecture import Architecture

from .strategies import activation_configs, any_architecture, architectures


def _ceil(x: Fraction) -> int:
    return -(-x.numerator // x.denominator)


@st.composite
def paper_layers(draw: st.DrawFn) -> tuple[Architecture, int, int, int]:
    """The paper's layer (MHA, MLP 4h, GELU, dropout, 16 bit), and s, b, t."""
    heads = draw(st.integers(1, 64))
    hidden = heads * draw(st.integers(1, 128))
    arch = Architecture(
        vocab=draw(st.integers(1, 100_000)), hidden=hidden, layers=draw(st.integers(1, 96)),
        heads=heads, kv_heads=heads, mlp_width=4 * hidden, gated_mlp=False, dropout=True,
    )  # fmt: skip
    return arch, draw(st.integers(1, 8192)), draw(st.integers(1, 64)), draw(st.integers(1, 16))


# GPT-3 175B as in the paper's Table 3: h=12288, a=96, s=2048, b=1, t=8
GPT3 = (
    Architecture(51200, 12288, 96, 96, 96, 4 * 12288, gated_mlp=False, dropout=True),
    2048,
    1,
    8,
)


@given(paper_layers())
@example(GPT3)
def test_reduces_to_the_papers_formulas(layer) -> None:
    """Section 4: sbh(34 + 5as/h); TP sbh(10 + 24/t + 5as/ht); TP+SP sbh(34/t + 5as/ht); section 5:
    selective (with TP+SP) 34sbh/t; full recompute 2sbh."""
    arch, s, b, t = layer
    sbh, a, h = s * b * arch.hidden, arch.heads, arch.hidden
    paper = {
        (1, False, "none"): sbh * (34 + Fraction(5 * a * s, h)),
        (t, False, "none"): sbh * (10 + Fraction(24, t) + Fraction(5 * a * s, h * t)),
        (t, True, "none"): sbh * (Fraction(34, t) + Fraction(5 * a * s, h * t)),
        (t, True, "selective"): Fraction(34 * sbh, t),
        (1, False, "full"): Fraction(2 * sbh),
    }
    for (tp, sp, recompute), expected in paper.items():
        config = ActivationConfig(s, b, 2, recompute, "eager", tp, sp)
        assert layer_activation_bytes(arch, config) == _ceil(expected)


@given(paper_layers())
def test_output_layers_as_in_section_4_3(layer) -> None:
    """With p = 1: sbh/t x (1 + 4 + 4v/h): embedding dropout mask, final norm, logits in fp32."""
    arch, s, b, t = layer
    config = ActivationConfig(s, b, 2, "none", "eager", t, True)
    expected = Fraction(s * b * arch.hidden, t) * (5 + Fraction(4 * arch.vocab, arch.hidden))
    assert head_activation_bytes(arch, config) == _ceil(expected)


@given(any_architecture, activation_configs(), st.integers(1, 16))
def test_linear_in_batch(arch, config, k) -> None:
    bigger = replace(config, batch=k * config.batch)
    for measure in (layer_activation_bytes, head_activation_bytes, activation_bytes):
        assert measure(arch, bigger) == k * measure(arch, config)


@given(architectures(max_layers=24), activation_configs(), st.integers(1, 8))
def test_stored_activations_are_linear_in_layers_plus_the_output_layers(arch, config, k) -> None:
    deeper = replace(arch, layers=k * arch.layers)
    head = head_activation_bytes(arch, config)
    assert head == head_activation_bytes(deeper, config)
    assert stored_activation_bytes(deeper, config) - head == k * (
        stored_activation_bytes(arch, config) - head
    )


@given(any_architecture, activation_configs())
def test_recomputation_never_increases_activations(arch, config) -> None:
    """full <= selective <= none, for what is stored and for the peak with the recomputed layer."""
    for measure in (layer_activation_bytes, stored_activation_bytes, activation_bytes):
        full, selective, none = (
            measure(arch, replace(config, recompute=r)) for r in ("full", "selective", "none")
        )
        assert full <= selective <= none


@given(any_architecture, activation_configs(), st.integers(1, 64), st.integers(1, 64))
def test_tensor_and_sequence_parallelism_never_increase_per_gpu_activations(
    arch, c, t1, t2
) -> None:
    fewer, more = sorted((t1, t2))
    for sp in (False, True):
        assert activation_bytes(arch, replace(c, tp=more, sp=sp)) <= activation_bytes(
            arch, replace(c, tp=fewer, sp=sp)
        )
    assert activation_bytes(arch, replace(c, tp=more, sp=True)) <= activation_bytes(
        arch, replace(c, tp=more, sp=False)
    )


@given(any_architecture, activation_configs())
def test_flash_attention_drops_the_s_squared_term(arch, config) -> None:
    """Flash keeps an fp32 logsumexp (4 B per head and row) in place of the a x s x s scores; that
    is never more from s >= 4 on (at s = 1 a 16-bit score is smaller than the logsumexp).
    Selective recompute drops the scores and, for transformers' eager attention, the K and V
    repeated to every query head (recomputed with the core attention)."""
    config = replace(config, seq=max(4, config.seq), element_bytes=max(2, config.element_bytes))
    eager, flash = (replace(config, attention=x) for x in ("eager", "flash"))
    assert activation_bytes(arch, flash) <= activation_bytes(arch, eager)
    scores = layer_activation_bytes(
        arch, replace(eager, recompute="none")
    ) - layer_activation_bytes(arch, replace(eager, recompute="selective"))
    tokens, e = config.seq * config.batch, config.element_bytes
    llama_style = arch.norm in ("rms", "gemma") and not arch.dropout
    repeated = 2 * e * tokens * (arch.q_width - arch.kv_width) if llama_style else 0
    assert (scores - repeated) % (config.seq * tokens * arch.heads) == 0


@given(any_architecture, activation_configs())
def test_peak_is_stored_plus_one_recomputed_layer(arch, config) -> None:
    none = replace(config, recompute="none")
    extra = layer_activation_bytes(arch, none) - layer_activation_bytes(arch, config)
    assert activation_bytes(arch, config) == stored_activation_bytes(arch, config) + extra
    assert activation_bytes(arch, none) == stored_activation_bytes(arch, none)
