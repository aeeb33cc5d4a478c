"""--plan: the job file, and the suite check run as a user runs it, live on this machine's CPU
class and replayed on synthetic GPU snapshots."""

import json
from pathlib import Path

import pytest

from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import Job
from rigcheck.memory.plan import job_from_options, load_plan, plan_argv
from rigcheck.memory.presets import preset
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

CHECK = str(Path(__file__).resolve().parents[2] / "suites" / "memory" / "test_plan_fits.py")
SMALL = {"model": "gpt2", "inference": True, "seq": 128, "overhead": "0"}
HUGE = {"model": "llama-3-70b", "precision": "fp32", "optimizer": "adam", "seq": 4096}


def test_plan_keys_are_the_fit_options() -> None:
    options = {"model": "llama-2-7b", "method": "qlora", "lora_targets": ["q", "v"],
               "lora-rank": 16, "double_quant": True, "offload_optimizer": False,
               "gpus": 8, "zero": 3, "device": "a100", "vram": "80GiB", "json": True}  # fmt: skip
    assert plan_argv(options) == ["--model", "llama-2-7b", "--method", "qlora", "--lora-targets",
                                  "q,v", "--lora-rank", "16", "--double-quant", "--gpus", "8",
                                  "--zero", "3"]  # fmt: skip
    assert job_from_options(options) == Job(
        arch=preset("llama-2-7b"), method="qlora", lora_targets=("q", "v"), lora_rank=16,
        double_quant=True, gpus=8, zero=3,
    )  # fmt: skip


def test_plans_take_the_framework_and_parallelism_options() -> None:
    options = {"model": "llama-2-70b", "framework": "megatron", "zero": 1, "gpus": 16, "tp": 8,
               "pp": 2, "sp": True, "checkpointing": "selective"}  # fmt: skip
    assert job_from_options(options) == Job(
        arch=preset("llama-2-70b"), framework="megatron", zero=1, gpus=16, tp=8, pp=2, sp=True,
        checkpointing="selective", seq=2048,
    )  # fmt: skip
    with pytest.raises(ConfigError, match="has no --zero 3"):
        job_from_options({**options, "zero": 3})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": "gpt2", "batchsize": 4}, "unrecognized arguments: --batchsize 4"),
        ({"model": "gpt2", "method": "dora"}, "invalid choice: 'dora'"),
        ({"model": "gpt2", "gpus": 0}, "--gpus must be >= 1"),
        ({"batch": 4}, "one of the arguments --model --config --params is required"),
        (["gpt2"], "a JSON object"),
    ],
)
def test_bad_plans_say_what_is_wrong(options, message) -> None:
    with pytest.raises(ConfigError, match=message):
        job_from_options(options)


def test_unreadable_plan_file(tmp_path) -> None:
    (tmp_path / "plan.json").write_text("{model: gpt2}")
    with pytest.raises(ConfigError, match="cannot read the plan"):
        load_plan(tmp_path / "plan.json")


@pytest.fixture
def write_json(tmp_path):
    def write(name: str, data) -> str:
        path = tmp_path / name
        path.write_text(json.dumps(data))
        return str(path)

    return write


def run_check(pytester, *args, live: bool = False):
    """A real pytest run of the check; in a subprocess when it collects this machine's facts."""
    run = pytester.runpytest_subprocess if live else pytester.runpytest_inprocess
    return run("-p", "no:cacheprovider", "-p", "rigcheck.plugin.memory", "-rsf", *args, CHECK)


def test_without_plan_the_check_skips_and_says_how(pytester, write_json) -> None:
    snapshot = write_json("cpu.json", synthetic_snapshot(load_spec("cpu")))
    result = run_check(pytester, "-m", "cpu", f"--facts={snapshot}")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no --plan given: pass --plan FILE*"])


def test_small_plan_fits_the_cpu_class_live(pytester, write_json) -> None:
    result = run_check(pytester, "-m", "cpu", f"--plan={write_json('plan.json', SMALL)}", live=True)
    result.assert_outcomes(passed=1)


def test_huge_plan_fails_on_the_cpu_class_with_the_figures(pytester, write_json) -> None:
    snapshot = write_json("cpu.json", synthetic_snapshot(load_spec("cpu")))
    plan = write_json("plan.json", HUGE)
    result = run_check(pytester, "-m", "cpu", f"--facts={snapshot}", f"--plan={plan}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*host memory: needs * GiB (* GB), free * GiB (* GB), headroom -*"]
    )


@pytest.mark.parametrize(
    ("options", "fits"),
    [
        ({"model": "llama-2-7b", "method": "qlora", "batch": 4, "checkpointing": "full"}, True),
        ({"model": "llama-2-70b", "gpus": 32, "zero": 3, "checkpointing": "full"}, True),
        ({"model": "llama-2-70b", "gpus": 8, "zero": 3, "checkpointing": "full"}, False),
    ],
)
def test_replayed_h100_snapshot(pytester, write_json, options, fits) -> None:
    snapshot = write_json("h100.json", synthetic_snapshot(load_spec("h100"), gpus=8))
    plan = write_json("plan.json", options)
    result = run_check(pytester, "-m", "h100", f"--facts={snapshot}", f"--plan={plan}")
    result.assert_outcomes(passed=int(fits), failed=int(not fits))
    if not fits:
        result.stdout.fnmatch_lines(
            ["*does not fit on 8 device(s) of this h100*", "*GPU 7 (*): needs * GiB (* GB), free*"]
        )


def test_bad_plan_stops_the_run_before_any_check(pytester, write_json) -> None:
    result = run_check(pytester, "-m", "cpu", f"--plan={write_json('plan.json', {'model': 'x'})}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--plan * unknown model 'x'*"])
