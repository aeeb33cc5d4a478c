"""Advice when a job does not fit: every suggestion is checked against the estimate itself
(the suggested batch fits, one more does not), on jobs hypothesis draws."""

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rigcheck.memory.advice import (
    SEARCH_LIMIT,
    advise,
    fits,
    kv_capacity,
    largest,
    largest_batch,
    largest_seq,
    levers,
    smallest,
    smallest_gpus,
    smallest_tp,
    smallest_zero,
)
from rigcheck.memory.cli import main
from rigcheck.memory.estimate import Job, estimate
from rigcheck.memory.presets import preset
from rigcheck.memory.units import GB, GiB

from .strategies import jobs


@st.composite
def jobs_and_budgets(draw: st.DrawFn) -> tuple[Job, int]:
    """A job and a usable budget near the bytes of the same job at some other batch, so the
    searches' boundaries land inside the range they search."""
    job = draw(jobs())
    other = replace(job, batch=draw(st.integers(1, 64)))
    return job, estimate(other).total_bytes + draw(st.integers(-(2**20), 2**20))


@pytest.mark.parametrize("k", [0, 1, 2, 3, 7, 8, 9, 1000, SEARCH_LIMIT - 1, SEARCH_LIMIT])
def test_largest_finds_the_last_n_that_fits(k) -> None:
    assert largest(lambda n: n <= k) == k


@pytest.mark.parametrize("k", [1, 2, 3, 7, 8, 9, 1000, SEARCH_LIMIT - 1, SEARCH_LIMIT])
def test_smallest_finds_the_first_n_that_fits(k) -> None:
    assert smallest(lambda n: n >= k) == k


def test_searches_say_when_nothing_fits() -> None:
    assert smallest(lambda n: False) is None and smallest(lambda n: n > SEARCH_LIMIT) is None
    assert largest(lambda n: True, limit=10) == 10 and largest(lambda n: n <= 5, limit=3) == 3


@settings(max_examples=60, deadline=None)
@given(jobs_and_budgets())
def test_the_largest_batch_fits_and_one_more_does_not(job_budget) -> None:
    job, usable = job_budget
    batch = largest_batch(job, usable)
    assert fits(job, usable, batch=batch) or batch == 0
    assert not fits(job, usable, batch=batch + 1)


@settings(max_examples=60, deadline=None)
@given(jobs_and_budgets())
def test_the_longest_sequence_fits_and_one_more_token_does_not(job_budget) -> None:
    job, usable = job_budget
    seq = largest_seq(job, usable)
    assert fits(job, usable, seq=seq) or seq == 0
    assert not fits(job, usable, seq=seq + 1)  # beyond the positions, the job is refused


@settings(max_examples=40, deadline=None)
@given(jobs_and_budgets())
def test_the_fewest_gpus_fit_and_one_step_fewer_does_not(job_budget) -> None:
    job, usable = job_budget
    gpus = smallest_gpus(job, usable)
    if gpus is None:
        return
    step = job.tp * job.pp * job.cp * job.ep
    assert gpus % step == 0 and fits(job, usable, gpus=gpus)
    assert gpus == step or not fits(job, usable, gpus=gpus - step)


@settings(max_examples=40, deadline=None)
@given(jobs_and_budgets())
def test_each_lever_reports_the_estimate_of_the_changed_job(job_budget) -> None:
    job, usable = job_budget
    before = estimate(job).total_bytes
    for lever in levers(job, usable):
        assert lever.saved_bytes == before - lever.total_bytes != 0
        assert lever.fits == (lever.total_bytes <= usable)


LLAMA = preset("llama-2-7b")


def test_advice_for_a_7b_full_fine_tune_at_zero0_on_80gb_gpus() -> None:
    """Llama-2-7B, bf16 mixed AdamW under DeepSpeed: 20 B/param at ZeRO-0 is 134.8 GB before
    activations, so no batch fits; ZeRO-1 over the 8 GPUs does, and so does optimizer offload."""
    job = Job(arch=LLAMA, seq=2048, batch=1, gpus=8)
    usable = 80 * GB
    advice = advise(job, usable)
    assert advice["largest_batch"] == 0 and advice["largest_seq"] == 0
    assert advice["smallest_gpus"] is None  # ZeRO-0 replicates: more GPUs do not help
    assert advice["smallest_zero"] == 1 and advice["smallest_tp"] == 2
    assert advice["smallest_tp_gpus"] == 16  # the data-parallel degree (8) is kept
    assert not fits(job, usable, zero=0) and fits(job, usable, zero=1)
    assert not fits(job, usable, tp=1, gpus=8) and fits(job, usable, tp=2, gpus=16)
    changes = {lever["change"]: lever for lever in advice["levers"]}
    assert list(changes) == [
        "--checkpointing selective", "--checkpointing full", "--optimizer adamw-8bit",
        "--zero 1 --offload-optimizer",
    ]  # fmt: skip
    assert [lever["fits"] for lever in changes.values()] == [False, False, False, True]
    full = changes["--checkpointing full"]
    assert full["total_bytes"] == estimate(replace(job, checkpointing="full")).total_bytes


def test_zero3_advice_counts_gpus_and_offload() -> None:
    job = Job(arch=LLAMA, seq=2048, batch=2, zero=3, gpus=2, checkpointing="full")
    usable = 24 * GiB
    gpus = smallest_gpus(job, usable)
    assert (
        gpus is not None and fits(job, usable, gpus=gpus) and not fits(job, usable, gpus=gpus - 1)
    )
    assert smallest_zero(job, usable) is None  # the job is already at ZeRO-3 and short
    tp = smallest_tp(job, usable)
    assert tp is not None and fits(job, usable, tp=tp, gpus=tp * 2)
    assert not fits(job, usable, tp=tp // 2, gpus=tp)


def test_vllm_capacity_is_what_is_left_for_kv_blocks() -> None:
    """Llama-2-7B bf16 on 80 GB at 0.92: weights, activations (one 8192-token step) and overhead
    come off the share; each 16-token block of all 32 layers is 2 x 32 x 4096 x 2 x 16 bytes.
    vLLM 0.26+ logs int(concurrency x max_model_len) tokens (get_kv_cache_capacity), which for
    one full-attention group is the pool's blocks x 16."""
    job = Job(arch=LLAMA, inference=True, seq=4096, batch=1)
    usable = int(80 * GB * 0.92)
    capacity = kv_capacity(job, usable)
    result = estimate(job)
    available = usable - (result.total_bytes - result.kv_cache_bytes)
    block = 2 * 32 * 4096 * 2 * 16
    assert capacity["kv_bytes_available"] == available
    assert capacity["kv_tokens"] == available // block * 16
    assert capacity["request_kv_bytes"] == 4096 // 16 * block
    assert capacity["max_concurrency"] == round(available // block / 256, 2)
    batch = largest_batch(job, usable)
    assert batch == int(available // (256 * block))  # vLLM's concurrency, floored


def fit_json(capsys, *argv: str) -> tuple[int, dict]:
    status = main(["fit", *argv, "--json"])
    return status, json.loads(capsys.readouterr().out)


def test_json_and_terminal_carry_the_advice(capsys) -> None:
    argv = ("--model", "llama-2-7b", "--vram", "80GB", "--batch", "8", "--seq", "4096",
            "--zero", "3", "--gpus", "8")  # fmt: skip
    status, report = fit_json(capsys, *argv)
    advice = report["advice"]
    assert status == 1 and not report["fits"]
    batch = advice["largest_batch"]
    assert batch >= 1 and fit_json(capsys, *argv[:5], str(batch), *argv[6:])[1]["fits"]
    assert not fit_json(capsys, *argv[:5], str(batch + 1), *argv[6:])[1]["fits"]
    assert main(["fit", *argv]) == 1
    out = " ".join(capsys.readouterr().out.split())  # as one line, whatever the terminal width
    assert f"largest micro-batch per GPU that fits at --seq 4096: {batch}" in out
    assert "--checkpointing full: saves" in out


def test_inference_terminal_shows_vllm_capacity(capsys) -> None:
    argv = ("--model", "llama-2-7b", "--inference", "--vram", "80GB", "--seq", "4096")
    assert main(["fit", *argv]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "maximum concurrency for 4,096 tokens per request:" in out
    assert "what would fit" not in out


def test_the_readme_examples_are_what_fit_prints(capsys) -> None:
    """README's "What would fit, and will it finish" shows real output: each line it shows is
    printed by the command it shows (the README stays true when the model changes)."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("### What would fit, and will it finish")[1].split("\n## ")[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```\n$ ")[1:]]
    assert len(blocks) == 2
    for block in blocks:
        command, _, shown = block.partition("\n")
        while command.endswith("\\"):  # a command continued on the next line
            more, _, shown = shown.partition("\n")
            command = command[:-1] + more
        argv = command.split()[1:]  # drop "rigcheck"
        main(argv)
        printed = " ".join(capsys.readouterr().out.split())
        for line in shown.splitlines():
            text = " ".join(line.split())
            if text and text != "..." and not text.endswith("..."):
                assert text in printed, f"README shows {text!r}; `{command}` prints otherwise"
