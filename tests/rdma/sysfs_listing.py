"""Builds a /sys tree from a 'path:value' listing (the output of `grep -s . FILES`), so real
counter listings from public reports can be probed as the probe reads /sys."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fabric" / "counters"


def build_tree(root: Path, listing: str, changed: dict[str, str] | None = None) -> Path:
    """Write each listed file under root; `changed` replaces values by path suffix."""
    for line in listing.splitlines():
        if not line.startswith("/"):
            continue  # a comment naming the source
        path, _, value = line.partition(":")
        for suffix, text in (changed or {}).items():
            if path.endswith(suffix):
                value = text
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(value + "\n")
    return root


def fixture_tree(root: Path, name: str, changed: dict[str, str] | None = None) -> Path:
    return build_tree(root, (FIXTURES / name).read_text(), changed)
