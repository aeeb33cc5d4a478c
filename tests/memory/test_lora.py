"""LoRA adapters: parameter counts by the PEFT rule, and what freezing the base does."""

from fractions import Fraction

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rigcheck.memory.architecture import linears, parameter_count
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import Job, estimate, unsharded_state
from rigcheck.memory.lora import ALL_LINEAR, adapter_groups, parse_targets, target_linears
from rigcheck.memory.presets import preset

from .strategies import any_architecture

targets = st.sampled_from((ALL_LINEAR, ("q", "v"), ("o",), ("up", "down")))


def lora_params(arch, rank, which) -> int:
    return sum(g.total for g in adapter_groups(arch, rank, which))


def _valid(arch, which):
    """PEFT-style names map onto GPT-2's fused matrix: use all-linear there for q/v lists."""
    return ALL_LINEAR if arch.fused_qkv and which != ALL_LINEAR else which


@given(any_architecture, st.integers(0, 512), st.integers(1, 64), targets)
def test_lora_params_are_linear_in_rank_and_zero_at_zero(arch, rank, k, which) -> None:
    which = _valid(arch, which)
    assert lora_params(arch, 0, which) == 0
    assert lora_params(arch, k * rank, which) == k * lora_params(arch, rank, which)


@given(any_architecture, st.integers(1, 512), targets)
def test_lora_adds_r_times_din_plus_dout_per_matrix(arch, rank, which) -> None:
    """Dense models; mixtures of experts are pinned against PEFT in test_real_lora.py."""
    assume(not arch.experts)
    which = _valid(arch, which)
    per_layer = sum(rank * (m.d_in + m.d_out) for m in target_linears(arch, which))
    assert lora_params(arch, rank, which) == arch.layers * per_layer


@given(any_architecture, targets, st.data())
def test_lora_trains_fewer_params_than_full_for_small_rank(arch, which, data) -> None:
    """Below r* = min over adapted matrices of d_in*d_out/(d_in + d_out), LoRA < full."""
    which = _valid(arch, which)
    bound = min(Fraction(m.d_in * m.d_out, m.d_in + m.d_out) for m in target_linears(arch, which))
    rank = data.draw(st.integers(0, max(0, int(bound - Fraction(1, 10**9)))))
    assert lora_params(arch, rank, which) < parameter_count(arch)


def test_llama_2_7b_lora_q_v_rank_8_is_4_194_304_params() -> None:
    """PEFT's print_trainable_parameters for this setup: 4,194,304 (0.0622%)."""
    arch = preset("llama-2-7b")
    assert lora_params(arch, 8, ("q", "v")) == 4_194_304 == 32 * 2 * 8 * (4096 + 4096)


def test_all_linear_covers_every_layer_matrix_and_not_lm_head() -> None:
    arch = preset("llama-2-7b")
    names = [m.name for m in target_linears(arch, ALL_LINEAR)]
    assert names == ["q", "k", "v", "o", "gate", "up", "down"] == [m.name for m in linears(arch)]


def test_hf_names_are_accepted() -> None:
    assert parse_targets("q_proj, v_proj") == ("q", "v")
    assert parse_targets("all-linear") == ALL_LINEAR
    assert parse_targets("c_attn") == ("qkv",)


def test_unknown_target_names_the_available_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown LoRA target.*q, k, v, o, gate, up, down"):
        target_linears(preset("llama-2-7b"), ("wq",))


@given(any_architecture, st.integers(1, 64), st.sampled_from(("lora", "qlora")))
def test_frozen_base_gets_no_grads_master_or_state(arch, rank, method) -> None:
    job = Job(arch=arch, method=method, lora_rank=rank, lora_targets=ALL_LINEAR, seq=512)
    state = unsharded_state(job)
    adapters = lora_params(arch, rank, ALL_LINEAR)
    assert state.trainable_params == adapters
    assert state.params == parameter_count(arch) + adapters
    assert state.grads_bytes == 2 * adapters and state.master_bytes == 4 * adapters


def test_lora_rank_zero_is_refused() -> None:
    with pytest.raises(ConfigError, match="--lora-rank must be >= 1 with --method lora"):
        estimate(Job(arch=preset("gpt2"), method="lora", lora_rank=0, seq=512))
