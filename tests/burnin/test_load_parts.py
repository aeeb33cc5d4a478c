"""The live load's parts on the CPU: the memory pattern test finds a flipped bit and names it,
the GEMM checksum sees one, the sampler never dies on a failed read, and traces round-trip."""

from __future__ import annotations

import json
import time

import pytest

torch = pytest.importorskip("torch")

from rigcheck.burnin.gemm import checksum, gemm_phase, inputs  # noqa: E402
from rigcheck.burnin.memtest import pattern_test  # noqa: E402
from rigcheck.burnin.sampler import Sampler  # noqa: E402
from rigcheck.burnin.trace import BurnInError, load_trace, save_trace  # noqa: E402
from rigcheck.testing.synthetic_trace import good_trace  # noqa: E402


def test_memory_pattern_test_is_clean_on_good_memory():
    buf = torch.empty(1 << 20, dtype=torch.int32)
    result = pattern_test(buf, until=0.0)
    assert result["errors"] == 0 and result["first_error"] is None
    assert result["passes"] == ["walking_ones:0", "random:0"]
    assert result["bytes_tested"] == 4 << 20


@pytest.mark.parametrize("word", [0, 12345, (1 << 20) - 1])
def test_memory_pattern_test_finds_and_names_a_flipped_bit(word):
    def flip(buf):
        buf[word] ^= 1 << 7

    result = pattern_test(torch.empty(1 << 20, dtype=torch.int32), until=0.0, corrupt=flip)
    assert result["errors"] == 2  # one per pass: walking ones, then random
    first = result["first_error"]
    assert first["pattern"] == "walking_ones:0" and first["offset_bytes"] == word * 4
    assert first["expected"] ^ first["found"] == 1 << 7


def test_walking_ones_sets_every_bit_of_every_word_alone():
    seen = []
    pattern_test(
        torch.empty(64, dtype=torch.int32), until=0.0, corrupt=lambda b: seen.append(b.clone())
    )
    words = seen[0].tolist()
    assert all(bin(w & 0xFFFFFFFF).count("1") == 1 for w in words)
    assert {(w & 0xFFFFFFFF).bit_length() - 1 for w in words} == set(range(32))


def test_checksum_sees_one_flipped_bit():
    a, b = inputs(torch, 64, torch.bfloat16, torch.device("cpu"))
    c = a @ b
    before = int(checksum(torch, c))
    c.view(torch.int16)[3, 5] ^= 1
    assert int(checksum(torch, c)) != before


class Clock:
    """gemm_phase's clock, moved on 0.1 s by each read: windows of a few GEMMs each however
    loaded the host is (at load 13 on 2 cores the wall-clock 2.5 s held one window, issue 38)."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 0.1
        return self.now


def test_the_same_gemm_gives_the_same_bits_on_the_cpu(monkeypatch):
    from rigcheck.burnin import gemm

    monkeypatch.setattr(gemm, "time", Clock())
    windows = gemm_phase(torch, torch.device("cpu"), "fp32", 0.0, 2.5)
    assert len(windows["t_s"]) >= 2 and sum(windows["checks"]) > 0
    assert sum(windows["mismatches"]) == 0 and len(set(windows["checksum"])) == 1
    assert all(v > 0 for v in windows["tflops"])


def test_sampler_survives_failing_reads():
    calls = iter(range(10**6))

    def flaky():
        if next(calls) % 2:
            raise RuntimeError("NVML: GPU is lost")
        return {"power_w": 100.0}

    with Sampler([flaky], time.monotonic(), interval_s=0.01) as s:
        # Until 5 ticks are in, not a fixed 0.2 s: on busy CI cores the thread may get less.
        deadline = time.monotonic() + 30
        while len(s.columns[0]["t_s"]) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
    column = s.columns[0]["power_w"]
    assert len(column) == len(s.columns[0]["t_s"]) >= 5
    assert None in column and 100.0 in column


def test_trace_round_trips(tmp_path):
    trace = good_trace(duration_s=30.0)
    save_trace(tmp_path / "t.json", trace)
    assert load_trace(tmp_path / "t.json") == json.loads(json.dumps(trace))


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "not valid JSON"),
        ('{"schema_version": 2}', "schema_version 2"),
        ('{"schema_version": 2}', r"again with this version \(rigcheck check CLASS --burn-in=60s"),
        ('{"schema_version": 1}', "not a rigcheck burn-in trace"),
        ('{"schema_version": 1}', "Record one with `rigcheck check CLASS --burn-in=60s`"),
    ],
)
def test_bad_trace_files_say_what_is_wrong_in_one_line(tmp_path, content, says):
    path = tmp_path / "t.json"
    path.write_text(content)
    with pytest.raises(BurnInError, match=says) as info:
        load_trace(path)
    assert "\n" not in str(info.value)


def test_columns_of_different_lengths_are_refused(tmp_path):
    trace = good_trace(duration_s=30.0)
    trace["devices"][0]["samples"]["power_w"].pop()
    save_trace(tmp_path / "t.json", trace)
    with pytest.raises(BurnInError, match="differ in length"):
        load_trace(tmp_path / "t.json")
