"""The GPU classes' healthy variation in the coverage campaign: read from public recordings of real
GPUs, each with its source, and never the CI machine's CPU repeats."""

from __future__ import annotations

import copy
import importlib.util
import json
import random
from pathlib import Path

import pytest

from rigcheck.testing.coverage import gpu_noise, measurements

REPO = Path(__file__).resolve().parents[2]
GPU_CLASSES = ["a100_40gb", "b200", "h100", "mi300x"]


def test_the_recordings_give_each_gpu_class_a_spread_between_gpus_and_between_repeats():
    assert gpu_noise.classes() == GPU_CLASSES
    for cls in GPU_CLASSES:
        for kind in ("matmul", "device"):
            spread = gpu_noise.spread(cls, kind)
            assert len(spread.between) >= 8 and len(spread.within) >= 8  # 8-GPU nodes, repeats
            # real healthy GPUs: within a few percent of their median, and not all alike
            assert 0.95 < min(spread.between) < max(spread.between) < 1.05
            assert 0.95 < min(spread.within) < max(spread.within) < 1.05
            assert spread.origin
    # the A100's gpu_burn rates: GPU 4's 16,890 Gflop/s the slowest, its run's median 16,973.5
    a100 = gpu_noise.spread("a100_40gb", "matmul")
    assert max(a100.between) == pytest.approx(16973.5 / 16890)


def test_the_fixture_is_what_its_script_makes_of_its_sources():
    path = REPO / "tools" / "gpu_variation.py"
    spec = importlib.util.spec_from_file_location("gpu_variation", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert json.loads(gpu_noise.VARIATION.read_text()) == tool.build()


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda d: d["records"][0].pop("source"), "has no source url/repo/path"),
        (lambda d: d["records"][1]["source"].update(url=""), "has no source url"),
        (lambda d: d["records"][2].update(runs=[]), "holds no figures"),
        (lambda d: d["classes"]["h100"]["matmul"]["within"].append("x"), "lacks"),
    ],
)
def test_a_recording_without_its_source_or_figures_is_refused(tmp_path, edit, says):
    data = copy.deepcopy(json.loads(gpu_noise.VARIATION.read_text()))
    edit(data)
    path = tmp_path / "variation.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=says):
        gpu_noise.load(path)


def test_a_gpu_class_draws_the_gpu_recordings_never_the_cpu_repeats(monkeypatch):
    def cpu_repeats(key):
        raise AssertionError(f"{key} drew the CI machine's CPU repeats")

    monkeypatch.setattr(measurements, "repeats_for", cpu_repeats)
    for cls in GPU_CLASSES:
        data = measurements.replay_file(cls, [str(i) for i in range(8)], {}, random.Random(1))
        assert measurements.NOISE.name not in data["note"]
        for m in data["measurements"]:
            spread = gpu_noise.spread(cls, m["key"].split("_")[0])
            level = measurements.class_levels(cls)[1][m["key"]]
            slowest = max(spread.between) * max(spread.within)
            fastest = min(spread.between) * min(spread.within)
            assert all(level / slowest <= v <= level / fastest for v in m["value"])


def test_a_gpu_class_without_a_recording_is_an_error_not_another_classes_noise():
    with pytest.raises(ValueError, match="no recorded GPU variation of a matmul figure"):
        measurements.noise("h200", "matmul_bf16_tflops")
    assert measurements.noise("cpu", "matmul_bf16_tflops").origin == measurements.NOISE.name
