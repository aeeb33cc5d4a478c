"""Whole-job estimates: parts add up, and the knobs move memory the way they must."""

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from rigcheck.memory.estimate import Estimate, Job, estimate

from .strategies import jobs

PARTS = ("weights_bytes", "grads_bytes", "master_bytes", "optimizer_bytes", "activations_bytes",
         "kv_cache_bytes", "overhead_bytes", "working_bytes")  # fmt: skip


@given(jobs())
def test_total_is_the_sum_of_integer_parts(job: Job) -> None:
    result = estimate(job).as_dict()
    assert all(type(result[p]) is int and result[p] >= 0 for p in PARTS)
    assert result["total_bytes"] == sum(result[p] for p in PARTS)
    assert result["model_state_bytes"] == sum(result[p] for p in PARTS[:4])


@given(jobs())
def test_inference_keeps_no_training_state(job: Job) -> None:
    result = estimate(
        replace(job, inference=True, zero=0, offload_optimizer=False, offload_params=False)
    )
    assert (result.grads_bytes, result.master_bytes, result.optimizer_bytes) == (0, 0, 0)
    assert result.trainable_params == 0 and result.kv_cache_bytes > 0


@given(jobs(), st.integers(1, 64))
def test_more_gpus_never_need_more_per_gpu(job: Job, extra: int) -> None:
    assert estimate(replace(job, gpus=job.gpus + extra)).total_bytes <= estimate(job).total_bytes


@given(jobs(), st.sampled_from(("deepspeed", "plain")), st.integers(1, 3))
def test_offload_moves_bytes_to_the_host_and_never_adds_to_the_gpu(job, framework, zero) -> None:
    job = replace(job, inference=False, framework=framework, zero=zero, offload_params=False)
    on, off = (
        estimate(replace(job, offload_optimizer=True)),
        estimate(replace(job, offload_optimizer=False)),
    )
    assert on.total_bytes <= off.total_bytes
    assert (on.host_bytes > 0) == (off.master_bytes + off.optimizer_bytes > 0)
    if framework == "plain":
        assert on.total_bytes + on.host_bytes == off.total_bytes


@given(jobs())
def test_fp32_never_needs_less_than_bf16(job: Job) -> None:
    """With flash attention: transformers' eager attention keeps a bf16 model's softmax in fp32
    and in bf16 (6 B a score) but an fp32 model's once (4 B), which on a tiny hidden size can
    outweigh everything else."""
    job = replace(job, attention="flash")
    fp32, bf16 = (estimate(replace(job, precision=p)).total_bytes for p in ("fp32", "bf16"))
    assert fp32 >= bf16


@given(jobs())
def test_checkpointing_never_increases_the_total(job: Job) -> None:
    full, selective, none = (
        estimate(replace(job, checkpointing=c)).total_bytes for c in ("full", "selective", "none")
    )
    assert full <= selective <= none


@given(jobs())
def test_overhead_is_its_own_line(job: Job) -> None:
    without = estimate(replace(job, overhead_bytes=0))
    result = estimate(job)
    assert result.overhead_bytes == job.overhead_bytes
    assert result.total_bytes - without.total_bytes == job.overhead_bytes
    assert isinstance(result, Estimate)
