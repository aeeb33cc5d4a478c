"""A planned job as a JSON file: `rigcheck fit`'s options as keys, read through the same parser.

    {"model": "llama-2-7b", "method": "qlora", "batch": 4, "seq": 2048,
     "checkpointing": "full", "gpus": 8, "zero": 3, "lora_targets": ["q", "v"]}

Keys are option names without the dashes ("lora-rank" or "lora_rank"); true switches a flag on;
a list is joined with commas. "device", "vram" and "json" may be present (a plan can be a saved
command line) and are ignored: a plan is judged against the memory the machine actually has free.
"""

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from rigcheck.memory.cli import add_fit_arguments, job_from_args
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.estimate import Job

IGNORED = ("device", "vram", "json", "command", "output")


@dataclass(frozen=True)
class Plan:
    """A job to check, and the file it came from."""

    job: Job
    source: str


class _PlanParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ConfigError(message)


def plan_argv(options: dict) -> list[str]:
    """The command-line arguments a plan's keys stand for."""
    argv = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if key.replace("-", "_") in IGNORED or value is False or value is None:
            continue
        if value is True:
            argv.append(flag)
        elif isinstance(value, list):
            argv += [flag, ",".join(str(v) for v in value)]
        else:
            argv += [flag, str(value)]
    return argv


def job_from_options(options: dict) -> Job:
    """The Job a plan's keys describe; a ConfigError says what is wrong."""
    if not isinstance(options, dict):
        raise ConfigError("a plan is a JSON object of rigcheck fit options")
    if isinstance(options.get("job"), dict):  # `rigcheck fit --json` output: its job's options
        options = options["job"]
    parser = _PlanParser(prog="plan", add_help=False)
    add_fit_arguments(parser)
    return job_from_args(parser.parse_args(plan_argv(options)))


def load_plan(path: str | Path) -> Plan:
    """Read and validate a plan file."""
    try:
        options = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the plan: {exc}") from None
    return Plan(job_from_options(options), str(path))
