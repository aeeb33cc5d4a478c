"""A test-only plugin that steers a real suite run from outside (loaded with `-p steer_run`).

RIGCHECK_STEER_PAUSE_AT=N    before the Nth suite check sets up, touch RIGCHECK_STEER_READY and
                             sleep, so the test can send SIGINT or SIGKILL mid-run;
RIGCHECK_STEER_RECORD=NAME   the check named NAME records RIGCHECK_STEER_JUDGEMENT (a JSON
                             Judgement dict) as a measured check does with record_property;
RIGCHECK_STEER_WARN=NAME     the check named NAME emits a UserWarning.
"""

import json
import os
import time
import warnings
from pathlib import Path

import pytest

# rigcheck is imported inside the hooks: imported here, before the root conftest registers
# rigcheck.plugin, it would escape pytest's assertion rewriting (and warn about it).
started = 0


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    global started
    from rigcheck.plugin.core import is_suite_item

    if is_suite_item(item):
        started += 1
        if started == int(os.environ.get("RIGCHECK_STEER_PAUSE_AT", 0)):
            Path(os.environ["RIGCHECK_STEER_READY"]).write_text(item.nodeid)
            time.sleep(120)  # the test interrupts or kills the run here
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    from rigcheck.verdict import PROPERTY

    if item.name == os.environ.get("RIGCHECK_STEER_RECORD"):
        judgement = json.loads(os.environ["RIGCHECK_STEER_JUDGEMENT"])
        item.user_properties.append((PROPERTY, judgement))
    if item.name == os.environ.get("RIGCHECK_STEER_WARN"):
        warnings.warn(UserWarning("steer_run: a warning from inside the check"), stacklevel=1)
    return (yield)
