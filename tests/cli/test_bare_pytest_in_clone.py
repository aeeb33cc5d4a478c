"""Issue 38: a pytest without rigcheck's dependencies, run inside the clone (the system's pytest
after README (1) installed them into ~/.rigcheck only), says in one line what is missing and
exits 4, instead of an ImportError traceback from deep inside the plugin. The missing module is
made missing here by a finder that refuses it, as on a Python that lacks rich."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WITHOUT_RICH = """
import sys, pytest
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name == "rich" or name.startswith("rich."):
            raise ModuleNotFoundError("No module named 'rich'", name="rich")
sys.meta_path.insert(0, Refuse())
sys.exit(pytest.main(["-p", "no:cacheprovider", "--co", "-q", "-m", "cpu"]))
"""


def test_a_pytest_without_the_dependencies_says_which_and_exits_4():
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_RICH], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "lacks rigcheck's dependencies (no module 'rich')" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
