"""Fixtures for the memory self-tests."""

import sys

import pytest


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """The real-tensor models are tiny: one intra-op thread runs them about twice as fast as two
    on a busy 2-core runner. Restored afterwards, so no other test sees the change."""
    torch = sys.modules.get("torch")  # imported by the real-tensor modules, if installed
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
