"""Will it finish: the FLOPs model pinned by hand, the estimate against published throughput of
GPU classes (held-out runs), and live on this CPU against a measured training step."""

import json
import statistics
import time

import pytest

from rigcheck.memory.architecture import Architecture
from rigcheck.memory.cli import main
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import Job, estimate
from rigcheck.memory.presets import preset
from rigcheck.memory.time_to_train import (
    Rates,
    class_rates,
    hardware_flops_per_token,
    implied_fraction,
    matmul_params,
    model_flops_per_token,
    step_seconds,
    time_to_train,
)
from rigcheck.memory.train_rates import CALIBRATION as PUBLISHED
from rigcheck.memory.train_rates import HELD_OUT_RUNS, MT_NLG
from rigcheck.spec import load_spec

LLAMA = preset("llama-2-7b")
N_7B = 32 * (4 * 4096**2 + 3 * 4096 * 11008) + 32000 * 4096  # layers' matrices and lm_head


def test_model_flops_are_6n_plus_attention() -> None:
    job = Job(arch=LLAMA, seq=4096)
    assert matmul_params(job) == N_7B
    assert model_flops_per_token(job) == 6 * N_7B + 12 * 32 * 4096 * 4096
    assert hardware_flops_per_token(job) == model_flops_per_token(job)


def test_recompute_and_frozen_weights_change_the_flops_run() -> None:
    attention = 4 * 32 * 4096 * 2048
    full = Job(arch=LLAMA, seq=2048, checkpointing="full")
    assert hardware_flops_per_token(full) == 8 * N_7B + 4 * attention
    selective = Job(arch=LLAMA, seq=2048, checkpointing="selective")
    assert hardware_flops_per_token(selective) == 6 * N_7B + 4 * attention
    lora = Job(arch=LLAMA, seq=2048, method="lora")
    adapters = estimate(lora).trainable_params
    assert adapters == 4_194_304
    assert hardware_flops_per_token(lora) == 4 * N_7B + 6 * adapters + 3 * attention


def test_a_tied_head_is_still_a_matmul() -> None:
    tied = Architecture(vocab=1000, hidden=64, layers=1, heads=4, kv_heads=4, mlp_width=128,
                        tied_embeddings=True)  # fmt: skip
    layer = 4 * 64 * 64 + 3 * 64 * 128
    assert matmul_params(Job(arch=tied, seq=16)) == layer + 1000 * 64


def test_step_time_and_wall_time_follow_the_rates() -> None:
    rates = Rates(matmul_tflops=100.0, achieved_fraction=0.5, busbw_gbps=100.0)
    job = Job(arch=LLAMA, seq=2048, batch=4, gpus=8, zero=3)
    flops = 4 * 2048 * model_flops_per_token(job)
    step = step_seconds(job, rates)
    assert step["compute_s"] == pytest.approx(flops / 50e12)
    assert step["communication_s"] == pytest.approx(2 * 6_738_415_616 * 3 // 2 / 100e9)
    result = time_to_train(job, rates, tokens=10**9)
    per_step = 4 * 2048 * 8
    assert result["steps"] == -(-(10**9) // per_step)
    assert result["wall_s"] == pytest.approx(result["steps"] * step["step_s"])
    assert result["tokens_per_s"] == pytest.approx(per_step / step["step_s"])


def test_slow_links_make_communication_the_step() -> None:
    job = Job(arch=LLAMA, seq=512, batch=1, gpus=64, zero=3)
    slow = step_seconds(job, Rates(1000.0, 0.5, busbw_gbps=1.0))
    assert slow["step_s"] == slow["communication_s"] > slow["compute_s"]
    with pytest.raises(ConfigError, match="--busbw"):
        step_seconds(job, Rates(1000.0, 0.5))
    assert step_seconds(Job(arch=LLAMA, seq=512), Rates(1000.0, 0.5))["communication_s"] == 0


@pytest.mark.parametrize("device", sorted(PUBLISHED))
def test_the_calibration_runs_set_the_fraction_and_its_spread(device) -> None:
    """The class's fraction is the median of what its calibration runs imply, the interval
    their lowest and highest; each calibration run is reproduced at its own fraction."""
    figures = load_spec(device).figures
    rates = class_rates(device, figures, "bf16-mixed", None)
    implied = sorted(implied_fraction(run, rates.matmul_tflops) for run in PUBLISHED[device])
    assert rates.achieved_fraction == statistics.median(implied)
    assert (rates.fraction_low, rates.fraction_high) == (implied[0], implied[-1])
    for run in PUBLISHED[device]:
        own = class_rates(device, figures, "bf16-mixed", implied_fraction(run, rates.matmul_tflops))
        result = time_to_train(run.job, own, steps=1, microbatches=run.microbatches)
        assert result["tokens_per_s_per_gpu"] == pytest.approx(run.tokens_per_s_per_gpu, rel=1e-9)


def _held_out_ratios() -> dict[str, tuple[float, float, float]]:
    """Per held-out run: estimated / published time of one step, at the class's median fraction
    and at the two ends of its spread."""
    out = {}
    for run in HELD_OUT_RUNS:
        rates = class_rates(run.device, load_spec(run.device).figures, "bf16-mixed", None)
        result = time_to_train(run.job, rates, steps=1, microbatches=run.microbatches)
        published = result["tokens_per_step"] / (run.tokens_per_s_per_gpu * run.job.gpus)
        fast, slow = result["wall_s_interval"]
        out[f"{run.device} {run.name}"] = (
            result["wall_s"] / published,
            fast / published,
            slow / published,
        )
    return out


def test_held_out_published_runs_land_within_25_percent() -> None:
    """15 published runs never used for calibration (MPT on 8 A100/H100, Megatron GPT 175B and
    530B on 384-2240 A100, MT-NLG 530B on 2240 and 3360 A100): the estimated time of a step is
    0.78-1.09 of the published one for 14 of them; MPT-30B with checkpointing on A100 is 1.30
    (the A100 runs with recomputation reach more of the matmul rate than the model credits).
    The stated interval (the calibration runs' spread) holds the published time for 10 of 15:
    the H100's, from two runs, is too narrow for its smaller models."""
    ratios = _held_out_ratios()
    assert len(ratios) == 15
    beyond = {name for name, (point, _, _) in ratios.items() if not 0.75 <= point <= 1.25}
    assert beyond == {"a100 MPT-30b seq 2048 ckpt"}
    assert (
        0.77 < min(p for p, _, _ in ratios.values()) < max(p for p, _, _ in ratios.values()) < 1.3
    )
    inside = {name for name, (_, fast, slow) in ratios.items() if fast <= 1 <= slow}
    assert len(inside) == 10
    assert not {"h100 MPT-13b seq 2048", "h100 MPT-1b seq 2048"} & inside


def test_a_class_without_a_published_run_needs_the_fraction() -> None:
    figures = load_spec("rtx4090").figures
    with pytest.raises(ConfigError, match="--achieved-fraction"):
        class_rates("rtx4090", figures, "bf16-mixed", None)
    assert class_rates("rtx4090", figures, "bf16-mixed", 0.4).achieved_fraction == 0.4


def test_fit_prints_and_reports_the_time(capsys) -> None:
    argv = ["fit", "--model", "llama-2-7b", "--device", "a100", "--gpus", "8", "--zero", "3",
            "--batch", "4", "--seq", "4096", "--checkpointing", "full",
            "--tokens", "2e9"]  # fmt: skip
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["time"]["steps"] == -(-2 * 10**9 // (4 * 4096 * 8))
    assert "tokens" not in report["job"]  # a plan describes the job, not its length
    fast, slow = report["time"]["wall_s_interval"]
    assert fast < report["time"]["wall_s"] < slow
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "will it finish: 15,259 steps of 131,072 tokens at" in out
    assert "achieved fraction 0.653 (median; 0.523-0.839) of 5 published runs" in out
    assert "over the published runs' spread" in out
    argv[argv.index("--device") : argv.index("--device") + 2] = ["--vram", "80GB"]
    assert main(argv) == 2
    assert "--device CLASS or --matmul-tflops" in capsys.readouterr().err


def test_the_figures_line_names_only_the_rates_given(capsys) -> None:
    def source(*more: str) -> dict:
        argv = ["fit", "--model", "llama-2-7b", "--zero", "3", "--batch", "4", "--seq", "4096",
                "--checkpointing", "full", "--tokens", "2e9", "--json"]  # fmt: skip
        main([*argv, *more])  # 0 or 1 (fits or not): the time is estimated either way
        return json.loads(capsys.readouterr().out)["time"]["rates"]

    given = source("--vram", "80GB", "--gpus", "8", "--matmul-tflops", "300",
                   "--achieved-fraction", "0.5", "--busbw", "90")  # fmt: skip
    assert given["source"] == "given: --matmul-tflops 300, --achieved-fraction 0.5, --busbw 90"
    one_gpu = source("--vram", "80GB", "--gpus", "1", "--matmul-tflops", "300",
                     "--achieved-fraction", "0.5")  # fmt: skip
    assert one_gpu["source"] == "given: --matmul-tflops 300, --achieved-fraction 0.5"
    spec = source("--gpus", "8", "--device", "a100", "--busbw", "90")
    assert spec["busbw_gbps"] == 90 and spec["source"].endswith("; given: --busbw 90")
    assert spec["source"].startswith("a100 spec: achievable matmul_bf16_tflops")


# --- live on this CPU: the fraction from one measured step predicts another model's step ---
CALIBRATION = dict(hidden=256, layers=2, heads=4, mlp=688, vocab=2048, batch=4, seq=128)
TARGET = dict(hidden=256, layers=4, heads=4, mlp=688, vocab=2048, batch=8, seq=64)


def _step(torch, shape: dict):
    """A real fp32 AdamW training step of a small decoder, and its Job."""
    from .torch_models import Decoder, next_token_loss

    arch = Architecture(vocab=shape["vocab"], hidden=shape["hidden"], layers=shape["layers"],
                        heads=shape["heads"], kv_heads=shape["heads"],
                        mlp_width=shape["mlp"])  # fmt: skip
    torch.manual_seed(0)
    model = Decoder(arch, torch.float32)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        next_token_loss(model, arch.vocab, shape["batch"], shape["seq"]).backward()
        optimizer.step()

    job = Job(arch=arch, precision="fp32", batch=shape["batch"], seq=shape["seq"])
    return step, job


def _matmul_tflops(torch) -> float:
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    out = torch.empty(1024, 1024)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        torch.mm(a, b, out=out)
        times.append(time.perf_counter() - start)
    return 2 * 1024**3 / statistics.median(times) / 1e12


def test_cpu_estimate_is_within_25_percent_of_a_measured_step() -> None:
    """This machine's figures: its matmul rate, and the fraction of it one measured step of a
    calibration model reaches. The estimate for a different model (twice the layers, other
    batch and length) is then checked against its own measured step. The two alternate, so a
    busy shared machine slows both alike; medians of 5. On a 2-core runner the ratio measured
    1.03-1.10 (the larger model runs a little more efficiently than the calibration one)."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one core each time: the shared runner's other core stays out
    try:
        measured, matmul = _measure(torch)
    finally:
        torch.set_num_threads(threads)
    calibration_job, target_job = _step(torch, CALIBRATION)[1], _step(torch, TARGET)[1]
    flops = CALIBRATION["batch"] * CALIBRATION["seq"] * hardware_flops_per_token(calibration_job)
    fraction = min(1.0, flops / measured["calibration"] / (matmul * 1e12))
    rates = Rates(matmul, fraction, source="measured on this machine")
    estimated = step_seconds(target_job, rates)["step_s"]
    assert estimated == pytest.approx(measured["target"], rel=0.25), (measured, estimated)


def _measure(torch) -> tuple[dict, float]:
    """Median seconds of the two steps, alternating, and the matmul rate."""
    calibration, _ = _step(torch, CALIBRATION)
    target, _ = _step(torch, TARGET)
    for step in (calibration, target, calibration, target):  # warm-up
        step()
    times = {"calibration": [], "target": []}
    for _ in range(5):
        for name, step in (("calibration", calibration), ("target", target)):
            start = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - start)
    measured = {name: statistics.median(t) for name, t in times.items()}
    return measured, _matmul_tflops(torch)


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--achieved-fraction", "1.5"], "the achieved fraction is a number above 0 and at most 1"),
        (["--achieved-fraction", "nan"], "the achieved fraction is a number above 0"),
        (["--busbw", "0"], "the bus bandwidth is a number above 0"),
        (["--tokens", "inf"], "tokens is a number of at least 1"),
        (["--tokens", "0"], "tokens is a number of at least 1"),
        (["--steps", "-3"], "the steps are a whole number above 0"),
        (["--microbatches", "0"], "the micro-batches are a whole number above 0"),
        (["--matmul-tflops", "-1", "--achieved-fraction", "0.4"], "the matmul rate is a number"),
    ],
)
def test_a_rate_or_length_out_of_range_is_a_usage_error(capsys, option, said):
    # Issue 38: 1.5 was clamped to 1 without a word, --busbw 0 and --tokens inf were
    # tracebacks, --tokens 0 was ignored.
    with pytest.raises(SystemExit) as exited:
        main(["fit", "--model", "llama-2-7b", "--method", "qlora", "--device", "a100", *option])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("pp", "m", "v", "bubble"),
    [(1, 8, 1, 0.0), (4, 8, 1, 3 / 11), (4, 8, 2, 3 / 19), (35, 240, 1, 34 / 274)],
)
def test_the_pipeline_bubble_is_megatrons(pp, m, v, bubble) -> None:
    """1F1B idles (p-1)/(m+p-1) of a step; v interleaved chunks per stage cut the fill and
    drain v-fold (Narayanan et al. 2021, sec. 2.2). The last row is MT-NLG 530B's pipeline:
    35 stages, 1920 sequences over 8 data-parallel replicas = 240 micro-batches of 1."""
    from rigcheck.memory.time_to_train import pipeline_stretch

    assert 1 - 1 / pipeline_stretch(pp, m, v) == pytest.approx(bubble)


def test_a_pipeline_step_takes_its_bubble_longer() -> None:
    job = Job(arch=LLAMA, seq=512, gpus=4, pp=4)
    rates = Rates(1000.0, 0.5)
    one = step_seconds(job, rates, microbatches=8)
    assert one["bubble_fraction"] == pytest.approx(3 / 11)
    whole = step_seconds(Job(arch=LLAMA, seq=512), rates, microbatches=8)["compute_s"]
    assert one["compute_s"] == pytest.approx(whole / 4 * 11 / 8)  # a quarter each, + the bubble
    assert time_to_train(job, rates, steps=1, microbatches=8)["tokens_per_step"] == 8 * 512


@pytest.mark.parametrize(("nodes", "seconds", "tflops"), [MT_NLG[0], MT_NLG[2]])
def test_mt_nlg_held_out_lands_closer_with_its_pipeline_bubble(nodes, seconds, tflops) -> None:
    """MT-NLG 530B on 280 and 420 nodes (held out; 350 calibrates): 35 pipeline stages over 240
    and 160 micro-batches. With the bubble the estimate is 0.78-0.81 of the published iteration
    time, without it 0.64-0.70: the bubble is the rest of the gap the issue measured."""
    from rigcheck.memory.time_to_train import class_rates
    from rigcheck.memory.train_rates import mt_nlg_job

    job, microbatches = mt_nlg_job(nodes)
    rates = class_rates("a100", load_spec("a100").figures, "bf16-mixed", None)
    with_bubble = step_seconds(job, rates, microbatches)["step_s"] / seconds
    stretch = 1 + 34 / microbatches
    assert 0.77 < with_bubble < 0.82
    assert with_bubble / stretch < 0.71  # what the estimate would say without the bubble
