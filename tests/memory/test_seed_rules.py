"""The seed documents' rules of thumb, pinned: each test states the correct figure and why."""

from dataclasses import replace

from rigcheck.memory.architecture import Architecture, TensorGroup, parameter_count, tensor_groups
from rigcheck.memory.estimate import Job, estimate
from rigcheck.memory.inference import kv_cache_bytes
from rigcheck.memory.model_state import frozen_state, trainable_state
from rigcheck.memory.precision import PRECISIONS
from rigcheck.memory.presets import preset
from rigcheck.memory.quantization import nf4_bits
from rigcheck.memory.units import GB, GiB

P = 7_000_000_000


def flat_state(precision: str, optimizer: str = "adam"):
    return trainable_state((TensorGroup("p", (P,), 1, "flat"),), PRECISIONS[precision], optimizer)


def test_002_and_000_sixteen_bytes_per_param_is_right() -> None:
    """ZeRO section 3.1: 2 + 2 + (4 + 4 + 4) = 16 B/param for mixed-precision Adam."""
    assert flat_state("bf16-mixed").total_bytes == 16 * P


def test_003_twelve_bytes_per_param_leaves_out_the_master_copy() -> None:
    """003: "2 weights + 8 optimizer (FP32 copy + momentum + variance) + 2 grads = 12": the three
    fp32 tensors it names are 12 bytes, not 8; the sum is 16, and 12 is 16 less the master copy."""
    state = flat_state("bf16-mixed")
    assert state.master_bytes + state.optimizer_bytes == 12 * P  # fp32 copy + m + v
    assert state.total_bytes - state.master_bytes == 12 * P


def test_004_eight_bytes_per_param_is_pure_bf16_adamw() -> None:
    """004: "params x 2 bytes x 4" = 8 B/param: right for torch AdamW on bf16 params (its state
    is bf16 too), half of mixed precision. 000's "7B full fine-tune bf16 ~56 GB": the same rule."""
    assert flat_state("bf16", "adamw").total_bytes == 8 * P == 56 * GB


def seed_003_estimate_training_memory_gb(params_m, batch, seq, hidden, layers) -> float:
    """The seed's function, verbatim in substance."""
    param_memory = params_m * 1e6 * (2 + 8 + 2)
    activation_memory = 2 * batch * seq * hidden * layers * 2
    return (param_memory + activation_memory) / (1024**3)


def test_003_350m_example_prints_5_41_not_12_to_15_gb() -> None:
    """003 says its example prints "approximately 12-15 GB". Its own formula gives 5.41 (GiB);
    and what the job needs is far more: 16 B/param of state, and per layer Korthikanti's
    34sbh (flash attention) rather than the 4sbh the seed counts: 22.0 GB before the CUDA context,
    on a 24 GB card only with flash attention; 47.7 GB with eager attention's s x s scores."""
    assert round(seed_003_estimate_training_memory_gb(350, 8, 2048, 1024, 24), 2) == 5.41
    arch = Architecture(vocab=50257, hidden=1024, layers=24, heads=16, kv_heads=16,
                        mlp_width=4096, gated_mlp=False, norm="layer", bias="all",
                        positions=2048, fused_qkv=True, tied_embeddings=True)  # fmt: skip
    assert 350e6 < parameter_count(arch) < 360e6
    job = Job(arch=arch, batch=8, seq=2048, overhead_bytes=0, framework="plain")  # paper: 16 B/p
    flash = estimate(job)
    assert flash.model_state_bytes == 16 * parameter_count(arch)
    assert flash.activations_bytes >= 24 * 34 * 8 * 2048 * 1024  # 34sbh per layer, at least
    assert round(flash.total_bytes / GB, 1) == 22.0
    eager = estimate(replace(job, attention="eager"))
    assert round(eager.total_bytes / GB, 1) == 47.7


def test_000_70b_in_4_bit_is_more_than_35_gb() -> None:
    """000: "70B in 4-bit ~35 GB" is 70e9 x 4 bits, a lower bound. NF4 adds its absmaxes and
    embeddings and lm_head stay 16-bit: Llama-2-70B weights are 36.4 GB with double quantization,
    39.6 GB without, before the KV cache and the CUDA context."""
    groups = tensor_groups(preset("llama-2-70b"))
    bf16 = PRECISIONS["bf16"]
    dq = frozen_state(groups, bf16, nf4_bits(True)).weights_bytes
    plain = frozen_state(groups, bf16, nf4_bits(False)).weights_bytes
    assert 35 * GB < dq < plain < 40 * GB
    assert (round(dq / GB, 1), round(plain / GB, 1)) == (36.4, 39.6)


def test_000_llama3_70b_qlora_needs_more_again() -> None:
    """Llama-3-70B's 128k vocabulary puts 2.1B parameters in 16-bit embeddings and lm_head:
    39.5 GB of weights with double quantization (000 quotes 42-48 GB in total for QLoRA)."""
    weights = frozen_state(tensor_groups(preset("llama-3-70b")), PRECISIONS["bf16"], nf4_bits(True))
    assert round(weights.weights_bytes / GB, 1) == 39.5


def test_002_a100_80gb_trains_5b_counting_model_state_only() -> None:
    """002: "an A100 80GB trains up to ~5B params with Adam mixed precision": exactly 80e9/16,
    with nothing else on the GPU. The CUDA context alone (1 GiB here) makes 5B not fit."""
    paper = {"precision": "bf16-mixed", "optimizer": "adam", "framework": "plain"}
    job = Job(params=5_000_000_000, overhead_bytes=0, **paper)
    assert estimate(job).total_bytes == 80 * GB
    with_context = Job(params=5_000_000_000, **paper)
    assert estimate(with_context).total_bytes > 80 * GB
    assert (80 * GB - GiB) // 16 == 4_932_891_136  # the most that fits beside 1 GiB of context


def test_000_activations_per_token_is_the_kv_cache_not_training_activations() -> None:
    """000: "activations per token ~ 2 x n_layers x hidden x 2 bytes" (0.5 MB for Llama-7B) is the
    16-bit KV cache of one token of a multi-head model. Training Llama-2-7B at batch 8 x 2048
    without checkpointing stores ~100 GB of activations (flash attention; 81 GB of them the
    paper's terms, the rest RMSNorm's fp32 copies as transformers keeps them), not 8 GB."""
    arch = preset("llama-2-7b")
    assert kv_cache_bytes(arch, 1, 1, 2) == 2 * 32 * 4096 * 2 == 524_288
    job = Job(arch=arch, batch=8, seq=2048, overhead_bytes=0, framework="plain")  # paper: 16 B/p
    assert 95 * GB < estimate(job).activations_bytes < 105 * GB
