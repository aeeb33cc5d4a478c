"""pytest's search for plugins, narrowed for in-process runs of the suites.

pytest 9 looks every plugin name up among the installed distributions' entry points: each `-p
NAME` and each entry of a `pytest_plugins` list (rigcheck.plugin names eleven) reads the entry
points of every distribution installed. In the self-tests' environment (torch, transformers,
deepspeed, ~300 distributions) that was a fifth of a short replay, paid again by every one of
the thousands of replays. Within `narrowed()`, `importlib.metadata.distributions()` answers only
the distributions that declare pytest plugins, read once: what pytest finds is unchanged.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Iterator
from contextlib import contextmanager

GROUP = "pytest11"  # pytest's entry-point group
_ALL = importlib.metadata.distributions  # the real one, whatever narrowed() has put in its place


@functools.cache
def _plugin_distributions() -> tuple[importlib.metadata.Distribution, ...]:
    return tuple(dist for dist in _ALL() if any(ep.group == GROUP for ep in dist.entry_points))


@contextmanager
def narrowed() -> Iterator[None]:
    """pytest's plugin lookups see only the distributions that declare pytest plugins."""
    original = importlib.metadata.distributions

    def distributions(**kwargs):
        return iter(_plugin_distributions()) if not kwargs else _ALL(**kwargs)

    importlib.metadata.distributions = distributions
    try:
        yield
    finally:
        importlib.metadata.distributions = original
