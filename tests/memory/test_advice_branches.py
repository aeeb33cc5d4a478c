"""`rigcheck fit`'s advice, one test per rarely used branch, each naming the value it expects:
a job that fits only at the last ZeRO stage, the offload levers at each stage, inference at a
batch above one (vLLM's capacity view, the tensor-parallel GPUs, the terminal's words)."""

import json
from dataclasses import replace

from rigcheck.memory.advice import advise, kv_capacity, levers, smallest_zero
from rigcheck.memory.cli import main
from rigcheck.memory.estimate import Job, estimate
from rigcheck.memory.presets import preset
from rigcheck.memory.units import GB

LLAMA_7B = preset("llama-2-7b")
TRAIN = Job(arch=LLAMA_7B, seq=2048, batch=1, gpus=8)


def bytes_at_zero(job: Job, zero: int) -> int:
    return estimate(replace(job, zero=zero)).total_bytes


def test_a_job_that_fits_only_at_zero3_is_told_zero3():
    """Between the ZeRO-2 and ZeRO-3 totals (42.3 and 31.0 GB for Llama-2-7B on 8 GPUs) only
    stage 3 fits: the search must reach the last stage."""
    usable = (bytes_at_zero(TRAIN, 2) + bytes_at_zero(TRAIN, 3)) // 2
    assert bytes_at_zero(TRAIN, 3) <= usable < bytes_at_zero(TRAIN, 2)
    assert smallest_zero(TRAIN, usable) == 3
    assert advise(TRAIN, usable)["smallest_zero"] == 3


def test_the_terminal_names_zero3_when_only_zero3_fits(capsys):
    argv = ["fit", "--model", "llama-2-7b", "--seq", "2048", "--batch", "1", "--gpus", "8"]
    usable = (bytes_at_zero(TRAIN, 2) + bytes_at_zero(TRAIN, 3)) // 2
    assert main([*argv, "--vram", f"{usable // 10**6}MB", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["advice"]["smallest_zero"] == 3
    main([*argv, "--vram", f"{usable // 10**6}MB"])
    assert "lowest ZeRO stage that fits: --zero 3" in " ".join(capsys.readouterr().out.split())


def test_offload_at_zero2_adds_no_stage_and_offers_no_parameter_offload():
    """ZeRO-Offload needs stage 1 or more (the job at 2 has it); parameters offload only at 3."""
    job = replace(TRAIN, zero=2)
    changes = [lever.change for lever in levers(job, 10 * GB)]
    assert changes[-1] == "--offload-optimizer"
    assert "--offload-optimizer --offload-params" not in changes


def test_offload_at_zero3_offers_parameter_offload_too():
    changes = [lever.change for lever in levers(replace(TRAIN, zero=3), 10 * GB)]
    assert changes[-2:] == ["--offload-optimizer", "--offload-optimizer --offload-params"]


def test_vllm_capacity_at_batch_4_is_the_capacity_at_batch_1():
    """vLLM reserves the cache once for the engine: how many requests share it does not
    change what is left for KV blocks (the batch is what the capacity answers, not an input)."""
    job = Job(arch=LLAMA_7B, inference=True, seq=4096, batch=4)
    usable = int(80 * GB * 0.92)
    one = estimate(replace(job, batch=1))
    expected = usable - (one.total_bytes - one.kv_cache_bytes)
    assert kv_capacity(job, usable)["kv_bytes_available"] == expected
    assert kv_capacity(job, usable) == kv_capacity(replace(job, batch=1), usable)


def test_inference_tensor_parallel_gpus_are_tp_times_pp_not_the_replicas():
    """Llama-2-70B in bf16 (138 GB of weights) on 80 GB GPUs: vLLM needs
    --tensor-parallel-size 2, i.e. 2 GPUs, however many replicas the node could hold."""
    job = Job(arch=preset("llama-2-70b"), inference=True, seq=4096, gpus=8)
    advice = advise(job, 80 * GB)
    assert (advice["smallest_tp"], advice["smallest_tp_gpus"]) == (2, 2)
    assert advice["smallest_gpus"] is None  # inference: more replicas never fit a model


def test_inference_advice_at_batch_above_one_names_concurrent_sequences(capsys):
    argv = ["fit", "--model", "llama-2-7b", "--inference", "--vram", "24GB", "--seq", "4096",
            "--batch", "64"]  # fmt: skip
    assert main(argv) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "largest concurrent sequences that fits at --seq 4096:" in out
    assert "micro-batch" not in out
