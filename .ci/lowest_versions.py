"""Write pip constraints pinning each of rigcheck's dependencies to the lowest version
pyproject.toml allows (`pytest>=8.1` -> `pytest==8.1`): what `tox -e oldest` installs."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lowest(requirement: str) -> str:
    match = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9][^,;\s]*)\s*", requirement)
    if not match:
        raise SystemExit(f"{requirement!r}: give every dependency a floor (name>=version)")
    return f"{match[1]}=={match[2]}"


def dependencies(pyproject: str) -> list[str]:
    """[project] dependencies (tomllib is 3.11+; rigcheck runs on 3.10 too)."""
    block = re.search(r"^dependencies = \[(.*?)^\]", pyproject, re.S | re.M)
    if block is None:
        raise SystemExit("pyproject.toml: no [project] dependencies list")
    return re.findall(r'^\s*"([^"]+)"', block[1], re.M)


def main() -> None:
    lines = [lowest(r) for r in dependencies((ROOT / "pyproject.toml").read_text())]
    Path(sys.argv[1]).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
