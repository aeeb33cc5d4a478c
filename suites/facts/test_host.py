"""The host: the facts every report and every class needs, readable."""

import pytest

from rigcheck.require import require

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
    value = require(facts, path)
    assert value not in (None, "", []), (
        f"{path} is empty: py-cpuinfo / psutil read nothing here. `python -m cpuinfo` and "
        "`python -c 'import psutil; print(psutil.virtual_memory())'` show what they see; a "
        "container without /proc/cpuinfo or /sys is the usual cause."
    )
