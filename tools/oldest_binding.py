"""Run pytest with another nvidia-ml-py first on sys.path: the real-binding tests at the lowest
version pyproject allows, inside the selftest environment (tox.ini), with no venv of its own.

    python -m pip install --no-deps --target DIR nvidia-ml-py==X
    python tools/oldest_binding.py DIR X -- PYTEST_ARGS...
"""

from __future__ import annotations

import sys
from importlib.metadata import version


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 4
    target, wanted, pytest_args = argv[0], argv[1], argv[3:]
    sys.path.insert(0, target)
    import pynvml
    import pytest

    found = version("nvidia-ml-py")
    if found != wanted or not pynvml.__file__.startswith(target):
        print(f"expected nvidia-ml-py {wanted} from {target}, got {found} at {pynvml.__file__}")
        return 4
    print(f"nvidia-ml-py {found} ({pynvml.__file__})")
    return pytest.main(pytest_args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
