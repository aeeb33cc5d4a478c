"""The host: the facts every report and every class needs, readable."""

import pytest

from rigcheck.require import fact

pytestmark = pytest.mark.facts

HOST_FACTS = [
    "host.cpu.model",
    "host.cpu.cores_logical",
    "host.cpu.simd_flags",
    "host.memory_total_bytes",
    "host.os_release",
]


@pytest.mark.parametrize("path", HOST_FACTS)
def test_host_fact_readable(facts, path):
    """Typed by rigcheck/facts/typed.py: an empty or placeholder value cannot be judged."""
    value = fact(facts, path)
    assert value != 0, (
        f"{path} is 0: py-cpuinfo / psutil read nothing here. `python -m cpuinfo` and "
        "`python -c 'import psutil; print(psutil.virtual_memory())'` show what they see; a "
        "container without /proc/cpuinfo or /sys is the usual cause."
    )
