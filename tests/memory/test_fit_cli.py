"""`rigcheck fit`: its options, its JSON, the exit status of the verdict, errors for bad input."""

import json
import subprocess
import sys

import pytest

from rigcheck.memory.cli import main, parse_count
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.presets import PUBLISHED_PARAMS
from rigcheck.memory.units import GB

KEYS = (
    "params", "trainable_params", "weights_bytes", "grads_bytes", "master_bytes",
    "optimizer_bytes", "activations_bytes", "kv_cache_bytes", "overhead_bytes", "working_bytes",
    "total_bytes", "device_bytes",
)  # fmt: skip
PARTS = KEYS[2:10]


def fit_json(capsys, *argv: str) -> tuple[int, dict]:
    status = main(["fit", *argv, "--json"])
    out = capsys.readouterr().out
    assert out.count("\n") == 1, "--json prints exactly one object"
    return status, json.loads(out)


@pytest.mark.parametrize(
    ("stage", "per_gpu_gb", "paper"),
    [(0, 120.0, "120"), (1, 31.40625, "31.4"), (2, 16.640625, "16.6"), (3, 1.875, "1.9")],
)
def test_reproduces_the_zero_papers_example(capsys, stage, per_gpu_gb, paper) -> None:
    """ZeRO Fig. 1: 7.5B parameters, Adam in mixed precision (K = 12), N = 64 GPUs."""
    argv = ["--params", "7.5B", "--precision", "fp16-mixed", "--optimizer", "adam", "--gpus", "64",
            "--zero", str(stage), "--vram", "80GB", "--overhead", "0",
            "--framework", "plain"]  # fmt: skip
    status, report = fit_json(capsys, *argv)
    assert report["total_bytes"] == report["model_state_bytes"] == int(per_gpu_gb * GB)
    assert f"{report['total_bytes'] / GB:.1f}".rstrip("0").rstrip(".") == paper
    assert status == (1 if stage == 0 else 0)


@pytest.mark.parametrize("name", sorted(PUBLISHED_PARAMS))
def test_reports_the_published_parameter_counts(capsys, name) -> None:
    _, report = fit_json(capsys, "--model", name, "--vram", "1TB")
    assert report["params"] == report["trainable_params"] == PUBLISHED_PARAMS[name]


def test_json_has_integer_bytes_that_sum_to_the_total(capsys) -> None:
    argv = ["--model", "llama-2-7b", "--method", "qlora", "--optimizer", "adamw", "--precision",
            "bf16-mixed", "--batch", "4", "--seq", "2048", "--checkpointing", "full",
            "--device", "a100", "--gpus", "8", "--zero", "3"]  # fmt: skip
    status, report = fit_json(capsys, *argv)
    assert all(type(report[k]) is int for k in KEYS) and type(report["fits"]) is bool
    assert report["total_bytes"] == sum(report[k] for k in PARTS)
    assert report["headroom_bytes"] == report["device_bytes"] - report["total_bytes"]
    assert report["trainable_params"] == 4_194_304  # q, v at rank 8
    assert status == 0 and report["fits"]


def test_device_class_memory_comes_from_its_spec(capsys) -> None:
    from rigcheck.spec import load_spec

    _, report = fit_json(capsys, "--model", "gpt2", "--device", "h100")
    assert report["device_bytes"] == load_spec("h100").memory_bytes


def test_inference_counts_weights_kv_cache_and_overhead(capsys) -> None:
    argv = ["--model", "llama-2-7b", "--inference", "--precision", "bf16", "--batch", "1",
            "--seq", "4096", "--kv-dtype", "fp16", "--vram", "24GiB"]  # fmt: skip
    status, report = fit_json(capsys, *argv)
    assert report["kv_cache_bytes"] == 2 * 32 * 4096 * 4096 * 2  # 2 GiB
    assert report["weights_bytes"] == 2 * PUBLISHED_PARAMS["llama-2-7b"]
    assert report["grads_bytes"] == report["optimizer_bytes"] == report["trainable_params"] == 0
    assert status == 0


def test_does_not_fit_exits_1_and_says_by_how_much(capsys) -> None:
    assert main(["fit", "--model", "llama-2-13b", "--vram", "24GiB"]) == 1
    out = capsys.readouterr().out
    assert "does not fit" in out and "GiB" in out and "GB" in out and "short" in out


def test_human_output_is_a_table_of_the_parts(capsys) -> None:
    assert main(["fit", "--model", "gpt2", "--vram", "24 GiB"]) == 0
    out = capsys.readouterr().out
    for part in ("weights", "gradients", "fp32 master weights", "optimizer state", "activations",
                 "KV cache", "--overhead", "total", "device", "fits"):  # fmt: skip
        assert part in out


def test_zero_with_one_gpu_is_fine(capsys) -> None:
    status, report = fit_json(
        capsys, "--model", "gpt2", "--zero", "3", "--gpus", "1", "--vram", "80GiB"
    )
    assert status == 0 and report["fits"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "llama-9b"], "unknown model 'llama-9b'"),
        (["--model", "gpt2", "--batch", "-1"], "--batch must be >= 1"),
        (["--model", "gpt2", "--seq", "0"], "--seq must be >= 1"),
        (["--model", "gpt2", "--gpus", "0"], "--gpus must be >= 1"),
        (["--model", "gpt2", "--method", "lora", "--lora-rank", "0"], "--lora-rank must be >= 1"),
        (["--model", "gpt2", "--method", "lora", "--lora-targets", "q,v"], "unknown LoRA target"),
        (["--params", "7B", "--method", "qlora"], "needs the tensor shapes"),
        (["--params", "7B", "--inference"], "needs the tensor shapes"),
        (["--model", "gpt2", "--device", "a1000"], "unknown device class 'a1000'"),
        (["--model", "gpt2"], "give the device"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(capsys, argv, message) -> None:
    if "--device" not in argv and message != "give the device":
        argv = [*argv, "--vram", "80GiB"]
    assert main(["fit", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err
    assert captured.err.startswith("rigcheck fit: error: ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "gpt2", "--vram", "80 furlongs"], "not a size"),
        (["--model", "gpt2", "--vram", "80G"], "not a size"),
        (["--params", "-5", "--vram", "80GiB"], "parameter count"),
        (["--model", "gpt2", "--vram", "80GiB", "--zero", "4"], "invalid choice"),
        (["--model", "gpt2", "--vram", "80GiB", "--method", "dora"], "invalid choice"),
        (["--model", "gpt2", "--params", "7B", "--vram", "80GiB"], "not allowed with"),
        (["--vram", "80GiB"], "one of the arguments --model --config --params is required"),
    ],
)
def test_unparseable_options_exit_2_with_one_line(capsys, argv, message) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["fit", *argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("rigcheck fit: error: ")


def test_json_names_the_precision_convention(capsys) -> None:
    _, report = fit_json(capsys, "--params", "1B", "--precision", "bf16-mixed", "--vram", "80GiB")
    assert (
        report["convention"].startswith("DeepSpeed 0.19.8") and report["framework"] == "deepspeed"
    )
    argv = ("--params", "1B", "--framework", "plain", "--vram", "80GiB")
    assert fit_json(capsys, *argv)[1]["convention"].startswith("ZeRO paper 3.1")
    _, report = fit_json(capsys, "--params", "1B", "--precision", "bf16", "--vram", "80GiB")
    assert report["convention"].startswith("torch.optim")


def test_the_rigcheck_command_runs_fit() -> None:
    from rigcheck import cli

    if "rigcheck.memory.cli" not in cli.SUBCOMMAND_MODULES:
        pytest.skip("rigcheck/cli.py does not list rigcheck.memory.cli in SUBCOMMAND_MODULES yet")
    argv = [sys.executable, "-m", "rigcheck", "fit", "--model", "gpt2", "--vram", "80GiB", "--json"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["params"] == PUBLISHED_PARAMS["gpt2"]


@pytest.mark.parametrize(
    ("text", "count"),
    [("6738415616", 6_738_415_616), ("7.5e9", 7_500_000_000), ("7.5B", 7_500_000_000),
     ("350M", 350_000_000), ("1_000", 1000)],
)  # fmt: skip
def test_parse_count(text: str, count: int) -> None:
    assert parse_count(text) == count


@pytest.mark.parametrize("text", ["0", "-5", "1.5", "7X", "e9", "nan", ""])
def test_parse_count_refuses(text: str) -> None:
    with pytest.raises(ConfigError, match="parameter count"):
        parse_count(text)
