"""A multi-GPU node of a class whose default is one GPU passes without --gpus (issue 10),
while a node that lost a GPU still fails test_device_count."""

import pytest

from rigcheck.detect import expected_gpu_count
from rigcheck.spec import load_spec
from rigcheck.testing.synthetic import synthetic_snapshot

H100 = load_spec("h100")


def test_an_8_gpu_h100_node_passes_without_gpus(replay):
    result = replay(synthetic_snapshot(H100, gpus=8), "-m", "h100")
    assert result.ret == pytest.ExitCode.OK, result.describe()


def test_an_h100_node_with_a_gpu_missing_fails_the_count(replay):
    """7 of 8: no HGX H100 node has 7 GPUs, so the count is judged against the next size up."""
    result = replay(synthetic_snapshot(H100, gpus=7), "-m", "h100")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.describe()
    assert "test_device_count" in result.failed, result.describe()
    message = result.failed["test_device_count"]
    assert "expected 8 accelerator(s) for h100, found 7" in message, message
    assert "A healthy h100 node has 1, 2, 4, 8" in message, message


def test_gpus_still_names_the_size_exactly(replay):
    """--gpus 8 on a node showing 4 fails: the flag is how a user says which node this is."""
    result = replay(synthetic_snapshot(H100, gpus=4), "-m", "h100", "--gpus", "8")
    assert "expected 8 accelerator(s) for h100" in result.failed["test_device_count"]


@pytest.mark.parametrize(
    ("found", "override", "expected"),
    [(8, None, 8), (4, None, 4), (7, None, 8), (3, None, 4), (0, None, 1), (8, 4, 4), (1, None, 1)],
)
def test_expected_gpu_count(found, override, expected):
    assert expected_gpu_count(H100, found, override) == expected


def test_a_class_without_node_sizes_keeps_its_default():
    m4 = load_spec("m4pro")
    assert m4.allowed_gpu_counts == [1]
    assert expected_gpu_count(m4, 2) == 1
