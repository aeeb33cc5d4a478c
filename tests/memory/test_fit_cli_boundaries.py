"""`rigcheck fit` at its edges: what it prints and returns, option by option.

The table's rows and units, the --json object's keys and values, the exit status at the exact
fit, the defaults a job gets, and the one line each kind of bad input gets. (issue 18: these
decide the memory-cli area's mutants; tests/memory/test_fit_cli.py covers the estimates.)
"""

import argparse
import io
import json

import pytest
from rich.console import Console

from rigcheck.memory.cli import MAX_PARAMS, add_parser, main, parse_count
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import DEFAULT_OVERHEAD_BYTES
from rigcheck.memory.presets import PRESETS
from rigcheck.memory.report import print_table
from rigcheck.memory.units import GiB

GPT2 = ("--model", "gpt2")


def fit(capsys, *argv: str) -> tuple[int, dict]:
    status = main(["fit", *argv, "--json"])
    return status, json.loads(capsys.readouterr().out)


def usage_error(capsys, *argv: str) -> str:
    """The one line argparse prints for options it cannot parse (exit 2)."""
    with pytest.raises(SystemExit) as exit_info:
        main(["fit", *argv])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    return captured.err


def fit_error(capsys, *argv: str) -> str:
    """The one line `rigcheck fit` prints for a job that makes no sense (exit 2)."""
    assert main(["fit", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    return captured.err


# --- parameter counts and sizes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "count"),
    [("2k", 2_000), ("2K", 2_000), ("3m", 3_000_000), ("3b", 3 * 10**9), ("1T", 10**12),
     (" 12 ", 12), ("1e3", 1000), ("1E3", 1000), ("1", 1), ("1000T", MAX_PARAMS)],
)  # fmt: skip
def test_parse_count_reads_every_suffix_and_the_largest_count(text, count) -> None:
    assert parse_count(text) == count and type(parse_count(text)) is int


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("7X", "'7X' is not a parameter count (e.g. 6738415616, 7.5e9, 7B)"),
        ("1/0", "'1/0' is not a parameter count (e.g. 6738415616, 7.5e9, 7B)"),
        ("1.5", "'1.5': a parameter count is a whole number >= 1"),
        ("0", "'0': a parameter count is a whole number >= 1"),
        ("1000000000000001", "'1000000000000001': more parameters than any model (at most 1e+15)"),
    ],
)
def test_parse_count_says_what_is_wrong(text, message) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_count(text)
    assert str(refused.value) == message


def test_a_bad_count_or_size_is_argparse_s_one_line_with_rigcheck_s_message(capsys) -> None:
    err = usage_error(capsys, "--params", "7X", "--vram", "80GiB")
    assert err == (
        "rigcheck fit: error: argument --params: '7X' is not a parameter count "
        "(e.g. 6738415616, 7.5e9, 7B) (see rigcheck fit --help)\n"
    )
    err = usage_error(capsys, *GPT2, "--vram", "0GiB")
    assert err == (
        "rigcheck fit: error: argument --vram: '0GiB': a device's memory is a size above 0, "
        "e.g. 80GiB (see rigcheck fit --help)\n"
    )
    assert "argument --overhead: " in usage_error(capsys, *GPT2, "--vram", "1B", "--overhead", "x")


def test_the_smallest_device_is_one_byte(capsys) -> None:
    status, report = fit(capsys, *GPT2, "--vram", "1B")
    assert status == 1 and report["device_bytes"] == 1 and report["fits"] is False


# --- the options and their defaults -----------------------------------------------------------

HELP = {
    "--config": ("a Hugging Face config.json (decoder-only)", "PATH"),
    "--params": ("parameter count, e.g. 7B", None),
    "--lora-rank": ("default 8 (PEFT)", "R"),
    "--lora-targets": (
        "matrices to adapt: q,k,v,o,gate,up,down (or q_proj,...); default: PEFT's for the "
        "model type (q,v for Llama, Mistral, Qwen2/3, Gemma; GPT-2's c_attn), refused where PEFT "
        "has none",
        "LIST|all-linear",
    ),
    "--double-quant": ("qlora: NF4 double quantization", None),
    "--optimizer": ("default adamw (training only)", None),
    "--framework": (
        "whose allocation conventions (default deepspeed); plain = the ZeRO paper",
        None,
    ),
    "--zero": (
        "0 = DDP (default; fsdp: 3 = FULL_SHARD, 2 = SHARD_GRAD_OP; megatron: 1 = distributed "
        "optimizer)",
        None,
    ),
    "--gpus": (
        "all GPUs of the job: tp x pp x cp x data parallel (inference: tp = gpus / pp)",
        None,
    ),
    "--tp": ("tensor-parallel degree (default 1)", None),
    "--pp": ("pipeline-parallel degree (default 1)", None),
    "--ep": ("expert-parallel degree (default 1)", None),
    "--cp": ("context-parallel degree (default 1)", None),
    "--sp": ("Megatron sequence parallelism (with --tp)", None),
    "--offload-optimizer": (
        "fp32 gradients, master weights and optimizer state on the host (ZeRO >= 1)",
        None,
    ),
    "--offload-params": ("ZeRO-3: weights on host too", None),
    "--batch": ("micro-batch per GPU (default 1)", None),
    "--seq": ("tokens per sequence (default 2048, or the model's positions)", None),
    "--attention": ("default flash", None),
    "--inference": ("weights + KV cache, no training", None),
    "--kv-dtype": ("default: the weights' dtype", None),
    "--engine": ("inference (default vllm)", None),
    "--mamba-cache-mode": (
        "vLLM, hybrid models: none (default; prefix caching off) is modelled, align and all are "
        "refused",
        None,
    ),
    "--gpu-memory-utilization": (
        "vLLM: the share of the device the engine may use (default 0.92)",
        "F",
    ),
    "--max-num-batched-tokens": ("vLLM: tokens one step may schedule (default 8192)", "N"),
    "--block-size": ("vLLM KV block tokens (16)", None),
    "--overhead": (
        "CUDA context + allocator slack per GPU, stated not hidden (default 1GiB)",
        "SIZE",
    ),
    "--device": ("a device class from expected/", "CLASS"),
    "--vram": ("e.g. 80GiB", "SIZE"),
    "--json": ("print one JSON object", None),
    "--output": ("also write the job as a --plan file", "FILE"),
}


def fit_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rigcheck")
    return add_parser(parser.add_subparsers(dest="command"))


def test_every_option_says_what_it_is_for() -> None:
    parser = fit_parser()
    actions = {a.option_strings[-1]: a for a in parser._actions}
    shown = {name: (actions[name].help, actions[name].metavar) for name in HELP}
    assert shown == HELP
    model = f"a preset ({', '.join(PRESETS)}) or a hub id in the local HF cache"
    assert actions["--model"].help == model
    assert actions["--output"].option_strings == ["-o", "--output"]
    assert parser.description.startswith("`rigcheck fit`: will this job fit in device memory")
    assert "Exit status: 0 fits, 1 does not fit, 2 bad input" in parser.format_help()


def test_a_job_s_defaults_are_recorded_as_given(capsys) -> None:
    """The --json object's "job" is the options as parsed: the defaults each one gets."""
    status, report = fit(capsys, *GPT2, "--vram", "80GiB")
    assert status == 0
    assert report["job"] == {
        "model": "gpt2", "config": None, "params": None, "method": "full", "lora_rank": 8,
        "lora_targets": None, "double_quant": False, "precision": "bf16-mixed",
        "optimizer": None, "framework": "deepspeed", "zero": None, "gpus": 1, "tp": None,
        "pp": None, "ep": None, "cp": None, "sp": False, "offload_optimizer": False,
        "offload_params": False, "batch": 1, "seq": None, "checkpointing": "none",
        "attention": "flash", "inference": False, "kv_dtype": None, "engine": "vllm",
        "gpu_memory_utilization": 0.92, "block_size": 16, "overhead": DEFAULT_OVERHEAD_BYTES,
        "max_num_batched_tokens": 8192, "vllm_version": "0.33", "no_async_scheduling": False,
        "mamba_cache_mode": "none", "device": None, "vram": 80 * GiB,
    }  # fmt: skip
    assert report["overhead_bytes"] == DEFAULT_OVERHEAD_BYTES == GiB


def test_the_defaults_are_the_job_they_name(capsys) -> None:
    """Leaving an option out is the same job as giving its documented default."""
    _, implicit = fit(capsys, *GPT2, "--vram", "80GiB")
    given = ("--method", "full", "--lora-rank", "8", "--precision", "bf16-mixed", "--optimizer",
             "adamw", "--framework", "deepspeed", "--zero", "0", "--gpus", "1", "--tp", "1",
             "--pp", "1", "--ep", "1", "--cp", "1", "--batch", "1", "--seq", "1024",
             "--checkpointing", "none", "--attention", "flash", "--overhead", "1GiB")  # fmt: skip
    _, explicit = fit(capsys, *GPT2, "--vram", "80GiB", *given)
    implicit.pop("job"), explicit.pop("job")
    assert implicit == explicit


def test_the_sequence_defaults_to_the_model_s_positions_up_to_2048(capsys) -> None:
    def activations(*argv: str) -> int:
        return fit(capsys, *argv, "--vram", "1TB")[1]["activations_bytes"]

    assert (
        activations(*GPT2)
        == activations(*GPT2, "--seq", "1024")
        != activations(*GPT2, "--seq", "512")
    )  # gpt2: 1024 positions
    llama = ("--model", "llama-2-7b")  # 4096 positions: 2048 is the default
    assert (
        activations(*llama)
        == activations(*llama, "--seq", "2048")
        != activations(*llama, "--seq", "4096")
    )


def test_fsdp_training_shards_fully_by_default_and_inference_does_not(capsys) -> None:
    def state(*argv: str) -> dict:
        report = fit(capsys, "--model", "llama-2-7b", "--framework", "fsdp", "--gpus", "8",
                     "--vram", "1TB", *argv)[1]  # fmt: skip
        return {k: v for k, v in report.items() if k != "job"}

    assert state() == state("--zero", "3") != state("--zero", "2")
    assert state("--inference") == state("--inference", "--zero", "0")


@pytest.mark.parametrize(
    ("gpus", "pp", "tp"), [("4", None, "4"), ("4", "2", "2"), ("1", None, "1"), ("8", "8", "1")]
)
def test_inference_spreads_over_the_gpus_by_tensor_parallelism(capsys, gpus, pp, tp) -> None:
    base = ("--model", "llama-2-7b", "--inference", "--gpus", gpus, "--vram", "80GiB")
    pipeline = ("--pp", pp) if pp else ()
    _, default = fit(capsys, *base, *pipeline)
    _, explicit = fit(capsys, *base, *pipeline, "--tp", tp)
    default.pop("job"), explicit.pop("job")
    assert default == explicit and default["dp"] == 1


def test_training_spreads_over_the_gpus_by_data_parallelism(capsys) -> None:
    _, report = fit(capsys, "--model", "llama-2-7b", "--gpus", "4", "--vram", "1TB")
    assert report["dp"] == 4
    _, report = fit(capsys, "--model", "llama-2-7b", "--gpus", "4", "--tp", "2", "--vram", "1TB")
    assert report["dp"] == 2


def test_pipeline_stages_that_do_not_divide_the_gpus_are_refused(capsys) -> None:
    argv = ("--model", "llama-2-7b", "--inference", "--gpus", "4", "--pp", "3", "--vram", "80GiB")
    err = fit_error(capsys, *argv)
    assert err == "rigcheck fit: error: --gpus 4 is not a multiple of tp x pp x cp = 3\n"


# --- errors for jobs that make no sense --------------------------------------------------------


def test_inference_with_an_optimizer_is_refused(capsys) -> None:
    err = fit_error(capsys, *GPT2, "--inference", "--optimizer", "adam", "--vram", "80GiB")
    assert err == "rigcheck fit: error: --inference has no optimizer: drop --optimizer\n"


def test_no_device_is_refused_saying_how_to_give_one(capsys) -> None:
    err = fit_error(capsys, *GPT2)
    assert err == (
        "rigcheck fit: error: give the device: --device CLASS (a spec in expected/) or "
        "--vram SIZE\n"
    )


def test_a_hub_id_not_in_the_local_cache_is_refused(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    err = fit_error(capsys, "--model", "org/no-such-model", "--vram", "80GiB")
    assert err == (
        "rigcheck fit: error: 'org/no-such-model' is not in the local Hugging Face cache "
        "(nothing is downloaded): give --config path/to/config.json\n"
    )


def test_a_preset_is_found_by_name_in_any_case(capsys) -> None:
    _, upper = fit(capsys, "--model", "GPT2", "--vram", "80GiB")
    _, lower = fit(capsys, *GPT2, "--vram", "80GiB")
    assert upper["params"] == lower["params"]


def test_a_config_file_is_read(capsys, tmp_path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
        "vocab_size": 1000, "max_position_embeddings": 512,
    }))  # fmt: skip
    argv = ("--config", str(config), "--vram", "80GiB")
    _, from_file = fit(capsys, *argv)
    assert from_file["params"] == 2 * 1000 * 64 + 2 * (4 * 64 * 64 + 3 * 64 * 128 + 2 * 64) + 64
    assert from_file["job"]["config"] == str(config)
    # its 512 positions are the default sequence
    assert (
        from_file["activations_bytes"]
        == fit(capsys, *argv, "--seq", "512")[1]["activations_bytes"]
        != fit(capsys, *argv, "--seq", "256")[1]["activations_bytes"]
    )


def test_an_output_in_a_missing_folder_is_refused_and_nothing_written(capsys, tmp_path) -> None:
    target = tmp_path / "no" / "plan.json"
    err = fit_error(capsys, *GPT2, "--vram", "80GiB", "-o", str(target))
    assert err.startswith("rigcheck fit: error: ") and str(target.parent) in err
    assert not target.exists()


def test_output_writes_the_job_as_a_plan_file(capsys, tmp_path) -> None:
    plan = tmp_path / "plan.json"
    argv = ["fit", *GPT2, "--method", "lora", "--lora-targets", "qkv", "--vram", "80GiB"]
    assert main([*argv, "-o", str(plan), "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert captured.err == (
        f"wrote {plan}: check it on the machine with rigcheck check CLASS --plan={plan} "
        f"(in a clone: pytest -m CLASS --plan={plan})\n"
    )
    assert plan.read_text() == json.dumps(report["job"], indent=2) + "\n"
    written = json.loads(plan.read_text())
    assert written["lora_targets"] == ["qkv"] and "output" not in written
    assert not {"func", "json", "command"} & set(written)


# --- the verdict at the exact fit ---------------------------------------------------------------


def test_a_job_that_fills_the_device_exactly_fits(capsys) -> None:
    _, probe = fit(capsys, *GPT2, "--vram", "80GiB")
    total = probe["total_bytes"]
    status, report = fit(capsys, *GPT2, "--vram", f"{total}B")
    assert status == 0 and report["fits"] is True and report["headroom_bytes"] == 0
    status, report = fit(capsys, *GPT2, "--vram", f"{total - 1}B")
    assert status == 1 and report["fits"] is False and report["headroom_bytes"] == -1


def test_vllm_may_use_only_its_share_of_the_device(capsys) -> None:
    argv = ("--model", "llama-2-7b", "--inference", "--vram", "1000000000B")
    _, report = fit(capsys, *argv, "--gpu-memory-utilization", "0.5")
    assert report["device_bytes"] == 10**9 and report["usable_bytes"] == 500_000_000
    assert report["headroom_bytes"] == 500_000_000 - report["total_bytes"]
    assert report["framework"] == "inference: vllm"
    assert report["convention"] == (
        "vllm: weights + KV cache (KV heads per GPU = max(1, kv_heads / tp)), 16-token blocks"
    )
    _, hf = fit(capsys, *argv, "--engine", "hf")
    assert hf["usable_bytes"] == hf["device_bytes"] == 10**9
    assert hf["framework"] == "inference: hf"
    assert hf["convention"] == "hf: weights + KV cache (KV heads per GPU = max(1, kv_heads / tp))"


def test_usable_is_rounded_down_to_a_whole_byte(capsys) -> None:
    argv = ("--model", "gpt2", "--inference", "--vram", "1001B", "--gpu-memory-utilization", "0.5")
    assert fit(capsys, *argv)[1]["usable_bytes"] == 500


def test_a_device_class_gives_its_memory(capsys) -> None:
    _, report = fit(capsys, *GPT2, "--device", "a100")
    assert report["device_bytes"] == report["usable_bytes"] > 0 and report["job"]["vram"] is None


# --- the table ----------------------------------------------------------------------------------


def table(report: dict) -> str:
    console = Console(width=200, file=io.StringIO(), color_system=None)
    print_table(report, console)
    return console.file.getvalue()


def report_of(capsys, *argv: str) -> dict:
    return fit(capsys, *argv)[1]


def test_the_table_gives_each_part_in_bytes_gib_and_gb(capsys) -> None:
    report = report_of(capsys, *GPT2, "--vram", "80GiB")
    text = table(report)
    assert (
        f"{report['params']:,} parameters, {report['trainable_params']:,} trainable; per GPU"
        in (text.replace("\n", " ").replace("  ", " "))
    )
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:5]]
            for line in text.splitlines() if line.count("│") == 5}  # fmt: skip
    assert "┃ part " in text and text.count("┃") == 5
    header = next(line for line in text.splitlines() if "┃ part" in line)
    assert [c.strip() for c in header.split("┃")[1:5]] == ["part", "bytes", "GiB", "GB"]
    assert list(rows) == [
        "weights", "gradients", "fp32 master weights", "optimizer state", "activations",
        "KV cache", "gathered layers / 16-bit copies / DDP buckets",
        "CUDA context + allocator (--overhead)", "total", "device",
    ]  # fmt: skip
    assert rows["weights"] == [f"{report['weights_bytes']:,}", "0.23", "0.25"]
    assert rows["CUDA context + allocator (--overhead)"] == ["1,073,741,824", "1.00", "1.07"]
    assert rows["device"] == ["85,899,345,920", "80.00", "85.90"]
    total = report["total_bytes"]
    assert rows["total"] == [f"{total:,}", f"{total / GiB:.2f}", f"{total / 1e9:.2f}"]
    assert "framework: deepspeed; layout: DeepSpeed 0.19.8" in text
    assert text.rstrip().endswith("fits: 76.19 GiB (81.81 GB) headroom")


def test_the_table_numbers_are_right_aligned_and_the_parts_left(capsys) -> None:
    text = table(report_of(capsys, *GPT2, "--vram", "80GiB"))
    device = next(line for line in text.splitlines() if "│ device" in line)
    weights = next(line for line in text.splitlines() if "│ weights" in line)
    assert device.index("85,899,345,920") + len("85,899,345,920") == weights.index(
        "248,879,616"
    ) + len("248,879,616")
    assert device.startswith("│ device ") and weights.startswith("│ weights ")


def test_the_usable_row_shows_only_when_it_differs(capsys) -> None:
    argv = ("--model", "llama-2-7b", "--inference", "--vram", "80GiB")
    assert "│ usable (--gpu-memory-utilization)" in table(report_of(capsys, *argv))
    assert "usable" not in table(report_of(capsys, *argv, "--engine", "hf"))
    report = report_of(capsys, *argv, "--engine", "hf")
    del report["usable_bytes"]  # an older report without the field
    assert "usable" not in table(report)


def test_the_notes_under_the_table(capsys) -> None:
    text = table(report_of(capsys, "--params", "7B", "--vram", "80GiB", "--framework", "deepspeed",
                           "--zero", "2", "--offload-optimizer"))  # fmt: skip
    assert "note: activations not modelled: --params gives no shapes; use --model" in text
    assert "note: offloaded to host memory per rank: " in text and "GiB" in text
    assert "mixture of experts" not in text
    dense = table(report_of(capsys, *GPT2, "--vram", "80GiB"))
    assert "note:" not in dense
    moe = report_of(capsys, "--model", "mixtral-8x7b", "--vram", "1TB")
    assert f"mixture of experts: {moe['active_params']:,} parameters active per token" in table(moe)
    report = report_of(capsys, *GPT2, "--vram", "80GiB")
    del report["active_params"], report["framework"]  # an older report without them
    text = table(report)
    assert "mixture of experts" not in text and "framework: ?; layout: " in text


def test_does_not_fit_says_by_how_much(capsys) -> None:
    report = report_of(capsys, *GPT2, "--vram", "1GiB")
    short = report["total_bytes"] - GiB
    text = table(report)
    assert (
        text.rstrip().splitlines()[-1]
        == f"does not fit: {short / GiB:.2f} GiB ({short / 1e9:.2f} GB) short"
    )


def test_the_table_goes_to_stdout_with_the_exit_status(capsys) -> None:
    assert main(["fit", *GPT2, "--vram", "1GiB"]) == 1
    out = capsys.readouterr().out
    assert "does not fit" in out and "│ weights" in out
    assert main(["fit", *GPT2, "--vram", "80GiB"]) == 0
    assert "fits: " in capsys.readouterr().out


def test_the_module_runs_as_the_rigcheck_command(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["fit", "--help"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("usage: rigcheck fit ")


@pytest.mark.parametrize(
    ("option", "allowed"),
    [
        ("--method", "'full', 'lora', 'qlora'"),
        ("--precision", "'fp32', 'bf16', 'fp16', 'bf16-mixed', 'fp16-mixed'"),
        ("--optimizer", "'adam', 'adamw', 'sgd'"),
        ("--framework", "'deepspeed', 'fsdp', 'megatron', 'hf-trainer', 'plain'"),
        ("--checkpointing", "'none', 'selective', 'full'"),
        ("--attention", "'eager', 'flash'"),
        ("--kv-dtype", "'fp32', 'bf16', 'fp16', 'fp8', 'int8'"),
        ("--engine", "'vllm', 'hf'"),
    ],
)
def test_an_option_with_named_values_refuses_another_listing_them(capsys, option, allowed) -> None:
    err = usage_error(capsys, *GPT2, "--vram", "80GiB", option, "bogus")
    assert err.startswith(f"rigcheck fit: error: argument {option}: invalid choice: 'bogus'")
    assert allowed in err


def test_the_help_groups_the_job_and_the_device_options() -> None:
    text = fit_parser().format_help()
    assert "\nthe job:\n" in text and "\nthe device:\n" in text


def test_the_gib_and_gb_columns_are_right_aligned_too(capsys) -> None:
    text = table(report_of(capsys, *GPT2, "--vram", "80GiB"))
    rows = [line for line in text.splitlines() if line.count("│") == 5 or line.count("┃") == 5]
    for line in rows:  # each number ends one space before its column's border
        cells = line.replace("┃", "│").split("│")[2:5]
        assert all(cell.endswith(" ") and not cell.endswith("  ") for cell in cells), line
    assert any(cell.startswith("  ") for line in rows for cell in line.split("│")[3:5])


def test_offloading_the_weights_moves_them_to_the_host(capsys) -> None:
    argv = ("--model", "llama-2-7b", "--zero", "3", "--gpus", "2", "--offload-optimizer")
    _, kept = fit(capsys, *argv, "--vram", "1TB")
    _, offloaded = fit(capsys, *argv, "--offload-params", "--vram", "1TB")
    assert kept["weights_bytes"] > 0 and offloaded["weights_bytes"] == 0
    assert offloaded["host_bytes"] > kept["host_bytes"]
    assert offloaded["job"]["offload_params"] is True


def test_a_plan_file_holds_the_job_s_options_and_nothing_else(capsys, tmp_path) -> None:
    plan = tmp_path / "plan.json"
    _, report = fit(capsys, *GPT2, "--vram", "80GiB")
    argv = ["fit", *GPT2, "--method", "lora", "--lora-targets", "qkv", "--vram", "80GiB"]
    assert main([*argv, "-o", str(plan)]) == 0
    assert set(json.loads(plan.read_text())) == set(report["job"])


# --- the second run's survivors (every mutant of memory-cli) ------------------------------------


def test_inference_tensor_parallelism_is_a_whole_number(capsys) -> None:
    _, report = fit(capsys, "--model", "llama-2-7b", "--inference", "--gpus", "4", "--vram", "1TB")
    assert type(report["dp"]) is int and report["dp"] == 1


def estimate_of(capsys, *argv: str) -> dict:
    report = fit(capsys, *argv)[1]
    report.pop("job")
    return report


@pytest.mark.parametrize(
    ("given", "default", "part"),
    [
        (("--method", "qlora", "--double-quant"), ("--method", "qlora"), "weights_bytes"),
        (("--inference", "--kv-dtype", "fp8"), ("--inference",), "kv_cache_bytes"),
        (("--optimizer", "sgd"), (), "optimizer_bytes"),
        (("--checkpointing", "full"), (), "activations_bytes"),
        (("--attention", "eager"), (), "activations_bytes"),
    ],
)
def test_each_job_option_reaches_the_estimate(capsys, given, default, part) -> None:
    base = ("--model", "llama-2-7b", "--vram", "1TB", "--seq", "4096", "--batch", "4")
    assert estimate_of(capsys, *base, *given)[part] != estimate_of(capsys, *base, *default)[part]


def test_the_vllm_block_size_is_a_number_that_reaches_the_estimate(capsys) -> None:
    argv = ("--model", "llama-2-7b", "--inference", "--vram", "80GiB", "--block-size", "32")
    report = fit(capsys, *argv)[1]
    assert report["convention"].endswith(", 32-token blocks") and report["job"]["block_size"] == 32


def test_a_parameter_count_alone_defaults_to_2048_tokens(capsys) -> None:
    base = ("--params", "7B", "--vram", "80GiB")
    assert estimate_of(capsys, *base) == estimate_of(capsys, *base, "--seq", "2048")


def test_parse_count_drops_underscores_anywhere() -> None:
    assert parse_count("7_B") == 7 * 10**9 and parse_count("1_000_000") == 10**6


def test_a_hub_id_in_the_local_cache_is_read_from_it(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    snapshot = tmp_path / "models--org--tiny" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
        "vocab_size": 1000, "max_position_embeddings": 512,
    }))  # fmt: skip
    _, report = fit(capsys, "--model", "org/tiny", "--vram", "80GiB")
    assert report["params"] == 2 * 1000 * 64 + 2 * (4 * 64 * 64 + 3 * 64 * 128 + 2 * 64) + 64


def test_the_rigcheck_help_lists_fit_and_keeps_its_paragraphs(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "fit will a training or inference job fit in device memory, with how much headroom" in (
        out
    )
    text = fit_parser().format_help()
    assert "how much headroom.\n\nExit status: 0 fits, 1 does not fit, 2 bad input" in text


def test_no_subcommand_is_a_usage_error_naming_it(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.endswith(
        "rigcheck: error: the following arguments are required: command\n"
    )


def test_the_total_row_is_bold_and_the_parts_are_not(capsys) -> None:
    console = Console(width=200, file=io.StringIO(), force_terminal=True, color_system="standard")
    print_table(report_of(capsys, *GPT2, "--vram", "80GiB"), console)
    lines = console.file.getvalue().splitlines()
    assert "\x1b[1m" in next(line for line in lines if "total" in line)
    assert "\x1b[1m" not in next(line for line in lines if "weights" in line)


def test_the_activations_note_is_a_line_of_its_own(capsys) -> None:
    text = table(report_of(capsys, "--params", "7B", "--vram", "80GiB"))
    assert "note: activations not modelled: --params gives no shapes; use --model" in (
        text.splitlines()
    )


# --- a bare number is bytes: one that small is a missing unit (issue 24) ----------------------


@pytest.mark.parametrize("vram", ["80", "80.0", "1024", str(2**20 - 1)])
def test_a_bare_number_too_small_for_a_device_asks_for_its_unit(capsys, vram) -> None:
    err = usage_error(capsys, *GPT2, "--vram", vram)
    assert err == (
        f"rigcheck fit: error: argument --vram: '{vram}' would be {int(float(vram))} bytes: give "
        f"the unit, e.g. {vram}GiB or {vram}GB (see rigcheck fit --help)\n"
    )


@pytest.mark.parametrize(
    "vram, size", [(str(2**20), 2**20), ("85899345920", 80 * GiB), ("512KiB", 512 * 1024)]
)
def test_a_byte_count_of_a_mebibyte_or_a_small_size_with_its_unit_is_read(capsys, vram, size):
    _, report = fit(capsys, *GPT2, "--vram", vram)
    assert report["device_bytes"] == size


def test_the_plan_line_names_the_class_to_check(capsys, tmp_path) -> None:
    plan = tmp_path / "plan.json"
    assert main(["fit", *GPT2, "--device", "a100", "-o", str(plan), "--json"]) == 0
    err = capsys.readouterr().err
    assert err == (
        f"wrote {plan}: check it on the machine with rigcheck check a100 --plan={plan} "
        f"(in a clone: pytest -m a100 --plan={plan})\n"
    )
