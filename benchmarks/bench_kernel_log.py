"""The kernel-log reader on mixes of real lines (fixtures/realworld/kernel_log.json, each
excerpt with its source), repeated to 20k-320k lines: ordinary logs, an Xid storm, an amdgpu
storm, and the 1% unprefixed ring-timeout storm that was quadratic (issue 43)."""

from __future__ import annotations

import json
from itertools import cycle, islice
from pathlib import Path

import pytest

from rigcheck.facts.kernel_log.amdgpu import parse_amdgpu_lines
from rigcheck.facts.kernel_log.nvrm import parse_nvrm
from rigcheck.facts.kernel_log.reader import parse_xid

CORPUS = Path(__file__).parents[1] / "fixtures" / "realworld" / "kernel_log.json"
SIZES = (20_000, 80_000, 320_000)


def corpus_lines() -> tuple[list[str], list[str]]:
    """(context lines, event lines) of the corpus, as its sources printed them."""
    data = json.loads(CORPUS.read_text())
    lines = [pair for vendor in ("nvidia", "amdgpu") for e in data[vendor] for pair in e["lines"]]
    return [t for t, x in lines if x is None], [t for t, x in lines if x is not None]


def event_lines(word: str) -> list[str]:
    return [line for line in corpus_lines()[1] if word in line]


def mix(size: int, storm: list[str], share: float) -> list[str]:
    """`size` lines: context lines with `share` of them from `storm`, spread evenly. Context
    without amdgpu's PCI prefix, so that an unprefixed line finds no GPU near it and looks at the
    whole log (the case that was quadratic)."""
    context = cycle([line for line in corpus_lines()[0] if "amdgpu 0000:" not in line])
    every = round(1 / share) if share else 0
    storm_lines = cycle(storm or [""])
    return [next(storm_lines) if every and i % every == 0 else next(context) for i in range(size)]


MIXES = {
    "ordinary": lambda n: mix(n, corpus_lines()[1], 0.01),
    "xid_storm": lambda n: mix(n, event_lines("NVRM: Xid"), 0.5),
    "amdgpu_storm": lambda n: mix(n, event_lines("amdgpu 0000:"), 0.5),
    "ring_timeout_1pct": lambda n: mix(n, event_lines("[drm:amdgpu_job_timedout"), 0.01),
}


def read_log(lines: list[str]) -> int:
    """What the probe does with a log's lines (reader._events, without the clock)."""
    xids = [e for e in (parse_xid(line) for line in lines) if e]
    return len(xids) + len(parse_amdgpu_lines(lines)) + len(parse_nvrm(lines))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", sorted(MIXES))
def test_kernel_log(benchmark, name, size):
    lines = list(islice(MIXES[name](size), size))
    benchmark.group = f"kernel_log {name}"
    benchmark.extra_info["lines_per_s_note"] = "size / median"
    benchmark.pedantic(read_log, args=(lines,), rounds=2, iterations=1)


@pytest.mark.parametrize("size", (*SIZES, 640_000))
def test_amdgpu_unprefixed_storm(benchmark, size):
    """The amdgpu pass alone on the 1% ring-timeout storm: where the quadratic term was."""
    lines = MIXES["ring_timeout_1pct"](size)
    benchmark.group = "amdgpu_lines ring_timeout_1pct"
    benchmark.pedantic(parse_amdgpu_lines, args=(lines,), rounds=2, iterations=1)
