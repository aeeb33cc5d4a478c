"""The memory library, its command and its plugin import without torch."""

import subprocess
import sys

CODE = (
    "import sys; import rigcheck.memory, rigcheck.memory.cli, rigcheck.plugin.memory; "
    "sys.exit('torch' in sys.modules)"
)


def test_imports_without_torch() -> None:
    result = subprocess.run([sys.executable, "-c", CODE], capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr.decode() or "torch was imported"
