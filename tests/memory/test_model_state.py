"""Model state and its sharding: the properties from memory-math.md, and the ones they imply."""

from fractions import Fraction

from hypothesis import example, given
from hypothesis import strategies as st

from rigcheck.memory.architecture import TensorGroup, tensor_groups
from rigcheck.memory.model_state import ModelState, frozen_state, model_state, trainable_state
from rigcheck.memory.optimizers import optimizer_state_bytes, tensor_state_bytes
from rigcheck.memory.precision import PRECISIONS
from rigcheck.memory.presets import PRESETS
from rigcheck.memory.quantization import WEIGHT_BITS
from rigcheck.memory.sharding import offload_optimizer, shard
from rigcheck.memory.units import bytes_for_bits

from .strategies import (
    gpu_counts,
    optimizers,
    param_counts,
    precisions,
    tensor_group_lists,
    uniform_optimizers,
)

PARTS = ("weights_bytes", "grads_bytes", "master_bytes", "optimizer_bytes")


def flat(n: int) -> tuple[TensorGroup, ...]:
    return (TensorGroup("params", (n,), 1, "flat"),)


def mixed_adam(n: int) -> ModelState:
    return trainable_state(flat(n), PRECISIONS["bf16-mixed"], "adam")


@given(param_counts, st.integers(1, 1000), precisions, uniform_optimizers)
def test_model_state_is_linear_in_parameter_count(n, k, prec, opt) -> None:
    one, many = (trainable_state(flat(m), PRECISIONS[prec], opt) for m in (n, k * n))
    assert all(getattr(many, p) == k * getattr(one, p) for p in PARTS)


@given(st.integers(16, 10**9), st.integers(1, 100), precisions)
def test_8bit_adam_is_linear_in_whole_blocks(blocks, k, prec) -> None:
    """Linear once tensors are whole 256-element blocks at or above the 4096-element threshold."""
    one, many = (
        trainable_state(flat(256 * b), PRECISIONS[prec], "adamw-8bit") for b in (blocks, k * blocks)
    )
    assert many.optimizer_bytes == k * one.optimizer_bytes


@given(tensor_group_lists(), tensor_group_lists(), precisions, optimizers)
def test_model_state_is_additive_over_disjoint_parameter_sets(a, b, prec, opt) -> None:
    p = PRECISIONS[prec]
    assert trainable_state(a + b, p, opt) == trainable_state(a, p, opt) + trainable_state(b, p, opt)


@given(param_counts)
@example(1)
def test_mixed_precision_adam_is_16_bytes_per_param(n) -> None:
    """ZeRO 3.1: 2 (16-bit weights) + 2 (grads) + 4 (fp32 master) + 4 + 4 (Adam m, v) = 16."""
    state = mixed_adam(n)
    assert (state.weights_bytes, state.grads_bytes, state.master_bytes) == (2 * n, 2 * n, 4 * n)
    assert state.optimizer_bytes == 8 * n and state.total_bytes == 16 * n


@given(param_counts)
def test_torch_adamw_bytes_per_param_by_dtype(n) -> None:
    """torch keeps exp_avg, exp_avg_sq in the param dtype: fp32 4+4+8 = 16, pure bf16 2+2+4 = 8."""
    for prec, per_param in (("fp32", 16), ("bf16", 8), ("fp16", 8)):
        assert trainable_state(flat(n), PRECISIONS[prec], "adamw").total_bytes == per_param * n


@given(param_counts, precisions)
def test_sgd_keeps_no_state_and_momentum_one_buffer(n, prec) -> None:
    p = PRECISIONS[prec]
    assert trainable_state(flat(n), p, "sgd").optimizer_bytes == 0
    assert trainable_state(flat(n), p, "sgd-momentum").optimizer_bytes == n * p.state_bytes


@given(param_counts, gpu_counts, precisions, optimizers)
def test_zero_stages_never_increase_per_gpu_bytes(n, gpus, prec, opt) -> None:
    state = trainable_state(flat(n), PRECISIONS[prec], opt)
    totals = [shard(state, z, gpus).total_bytes for z in range(4)]
    assert totals == sorted(totals, reverse=True)


@given(st.integers(2, 10**12), gpu_counts)
def test_zero_stages_all_equal_iff_one_gpu(n, gpus) -> None:
    """With an fp32 master and Adam state (K = 12 > 0) every stage saves something on N > 1."""
    totals = [shard(mixed_adam(n), z, gpus).total_bytes for z in range(4)]
    assert (len(set(totals)) == 1) == (gpus == 1)


@given(param_counts, gpu_counts, precisions, optimizers)
def test_zero3_is_ddp_over_n_up_to_padding(n, gpus, prec, opt) -> None:
    state = trainable_state(flat(n), PRECISIONS[prec], opt)
    ddp, zero3 = shard(state, 0, gpus).total_bytes, shard(state, 3, gpus).total_bytes
    assert 0 <= zero3 * gpus - ddp < len(PARTS) * gpus


@given(st.integers(1, 10**10), gpu_counts, precisions, optimizers)
def test_zero3_is_exactly_ddp_over_n_when_n_divides(k, gpus, prec, opt) -> None:
    state = trainable_state(flat(256 * 4096 * gpus * k), PRECISIONS[prec], opt)
    assert shard(state, 3, gpus).total_bytes * gpus == shard(state, 0, gpus).total_bytes


@given(param_counts, gpu_counts, st.integers(0, 3), precisions, optimizers)
def test_shards_sum_to_the_unsharded_bytes_up_to_padding(n, gpus, zero, prec, opt) -> None:
    state = trainable_state(flat(n), PRECISIONS[prec], opt)
    per_gpu = shard(state, zero, gpus)
    for part in PARTS:
        whole, one = getattr(state, part), getattr(per_gpu, part)
        if one != whole:  # this part is partitioned at this stage
            assert 0 <= gpus * one - whole < gpus


@given(param_counts, gpu_counts, gpu_counts, st.integers(0, 3), precisions, optimizers)
def test_no_stage_grows_with_more_gpus(n, g1, g2, zero, prec, opt) -> None:
    state = trainable_state(flat(n), PRECISIONS[prec], opt)
    fewer, more = sorted((g1, g2))
    assert shard(state, zero, more).total_bytes <= shard(state, zero, fewer).total_bytes


@given(param_counts, gpu_counts, st.integers(0, 3), precisions, optimizers)
def test_offload_never_increases_gpu_bytes_and_loses_nothing(n, gpus, zero, prec, opt) -> None:
    per_gpu = shard(trainable_state(flat(n), PRECISIONS[prec], opt), zero, gpus)
    on_gpu, on_host = offload_optimizer(per_gpu)
    assert on_gpu.total_bytes <= per_gpu.total_bytes
    assert on_gpu.total_bytes + on_host == per_gpu.total_bytes


def test_zero_paper_example() -> None:
    """Rajbhandari et al. Fig. 1: Psi = 7.5B, K = 12, N = 64: 120, 31.4, 16.6, 1.9 GB per GPU."""
    state = trainable_state(flat(7_500_000_000), PRECISIONS["fp16-mixed"], "adam")
    totals = [shard(state, z, 64).total_bytes for z in range(4)]
    assert totals == [120_000_000_000, 31_406_250_000, 16_640_625_000, 1_875_000_000]


@given(st.integers(1, 10**12))
@example(1)
def test_weight_bits_order_fp32_bf16_int8_nf4_nf4dq(n) -> None:
    """Strict in exact bits for any P >= 1; in whole bytes strict only once P is large enough."""
    order = ["fp32", "bf16", "int8", "nf4", "nf4-dq"]
    bits = [WEIGHT_BITS[k] * n for k in order]
    assert bits == sorted(bits, reverse=True) and len(set(bits)) == len(bits)
    in_bytes = [bytes_for_bits(n, WEIGHT_BITS[k]) for k in order]
    assert in_bytes == sorted(in_bytes, reverse=True)
    assert len(set(in_bytes)) == len(in_bytes) or n < 64


def test_nf4_bits_per_param() -> None:
    """QLoRA section 3: 4.5 bits; double quantization 4 + 8/64 + 32/(64 x 256) = 4.127 bits."""
    assert WEIGHT_BITS["nf4"] == Fraction(9, 2)
    assert WEIGHT_BITS["nf4-dq"] == Fraction(4) + Fraction(1, 8) + Fraction(1, 512)
    assert float(WEIGHT_BITS["nf4-dq"]) == 4.126953125
    assert bytes_for_bits(1, WEIGHT_BITS["int8"]) == bytes_for_bits(1, WEIGHT_BITS["nf4"]) == 1


@given(st.integers(64, 8192), st.integers(64, 8192))
def test_optimizer_order_for_matrices(rows, cols) -> None:
    """AdamW fp32 >= AdamW bf16 >= 8-bit >= Adafactor >= SGD for a matrix of >= 4096 elements."""
    shape = (rows, cols)
    order = [
        tensor_state_bytes(shape, "adamw", 4),
        tensor_state_bytes(shape, "adamw", 2),
        tensor_state_bytes(shape, "adamw-8bit", 0),
        tensor_state_bytes(shape, "adafactor", 4),
        tensor_state_bytes(shape, "sgd", 4),
    ]
    assert order == sorted(order, reverse=True) and order[-1] == 0


def test_optimizer_order_for_every_preset() -> None:
    for arch in PRESETS.values():
        groups = tensor_groups(arch)
        order = [
            optimizer_state_bytes(groups, "adamw", 4),
            optimizer_state_bytes(groups, "adamw", 2),
            optimizer_state_bytes(groups, "adamw-8bit", 0),
            optimizer_state_bytes(groups, "adafactor", 4),
            optimizer_state_bytes(groups, "sgd", 4),
        ]
        assert order == sorted(order, reverse=True)


def test_where_the_optimizer_order_breaks() -> None:
    """Found by the property tests: the order is not universal, tensor by tensor.

    bitsandbytes keeps 32-bit state for tensors under 4096 elements, so a norm weight costs
    8 B/param in "8-bit" Adam and 4 B/param in pure-bf16 AdamW; and Adafactor's full fp32 variance
    for a large 1-D tensor (4 B/param) exceeds 8-bit Adam's 2 + 8/256 B/param.
    """
    norm = (4095,)
    assert (
        tensor_state_bytes(norm, "adamw-8bit", 0) == 8 * 4095 > tensor_state_bytes(norm, "adamw", 2)
    )
    big_vector = (8192,)
    assert tensor_state_bytes(big_vector, "adafactor", 4) == 4 * 8192
    assert tensor_state_bytes(big_vector, "adamw-8bit", 0) == 2 * 8192 + 2 * 4 * 32


def test_8bit_adam_rules() -> None:
    """2 uint8 states + an fp32 absmax per 256-block each; under 4096 elements 2 fp32 states."""
    assert tensor_state_bytes((4096,), "adamw-8bit", 0) == 2 * 4096 + 2 * 4 * 16
    assert tensor_state_bytes((300, 100), "adamw-8bit", 0) == 2 * 30000 + 2 * 4 * 118
    assert tensor_state_bytes((63, 64), "adamw-8bit", 0) == 2 * 4 * 4032


def test_adafactor_factors_matrices_and_keeps_vectors_whole() -> None:
    assert tensor_state_bytes((4096, 11008), "adafactor", 4) == 4 * (4096 + 11008)
    assert tensor_state_bytes((4096,), "adafactor", 4) == 4 * 4096
    assert tensor_state_bytes((3, 5, 7), "adafactor", 2) == 2 * 3 * (5 + 7)


@given(tensor_group_lists(), precisions, optimizers)
def test_frozen_parameters_get_no_grads_master_or_state(groups, prec, opt) -> None:
    frozen = frozen_state(groups, PRECISIONS[prec])
    assert (frozen.grads_bytes, frozen.master_bytes, frozen.optimizer_bytes) == (0, 0, 0)
    assert frozen.trainable_params == 0
    assert frozen.weights_bytes == trainable_state(groups, PRECISIONS[prec], opt).weights_bytes


@given(tensor_group_lists(), precisions, optimizers, st.booleans())
def test_qlora_stores_the_layer_matrices_in_nf4(groups, prec, opt, dq) -> None:
    embedding = TensorGroup("embed", (100, 8), 1, "embedding")
    state = model_state((*groups, embedding), (), "qlora", PRECISIONS[prec], opt, dq)
    bits = WEIGHT_BITS["nf4-dq" if dq else "nf4"]
    nf4 = sum(g.count * bytes_for_bits(g.numel, bits) for g in groups)
    assert state.weights_bytes == nf4 + 800 * PRECISIONS[prec].weight_bytes
    assert state.total_bytes == state.weights_bytes
