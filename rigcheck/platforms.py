"""The platform a node runs on (a cloud instance family, or bare metal) and what it may
legitimately differ in from its class: data under expected/platforms/, one file each.

The platform is read from the facts (host.dmi, the firmware's own name for the machine) or
named with --platform; judging uses the class spec adjusted by it, and the certificate names it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from rigcheck.errors import SpecError
from rigcheck.spec import SPEC_DIR, spec_dir

BARE_METAL = "bare_metal"  # no platform file: the class spec as written
SHIPPED = SPEC_DIR / "platforms"
SCHEMA_FILE = SHIPPED / "platform.schema.json"  # rigcheck's own, whichever folder holds the files


def platform_dir() -> Path:
    """A private spec set's platforms/ ($RIGCHECK_EXPECTED_DIR), else the shipped ones: a site
    whose private set has no platform files still judges on the platforms rigcheck knows."""
    private = spec_dir() / "platforms"
    return private if private.is_dir() else SHIPPED


def load_platforms(folder: Path | None = None) -> dict[str, dict[str, Any]]:
    """Every platform file, validated; a broken one is a SpecError naming it."""
    import jsonschema  # where used: the plugin imports this module at start-up

    folder = folder or platform_dir()
    platforms = {}
    for path in sorted(folder.glob("*.json")):
        if path.name == "platform.schema.json":
            continue
        try:
            data = json.loads(path.read_text())
        except ValueError as exc:
            raise SpecError(f"{path}: {exc}") from None
        error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
        if error is not None:
            raise SpecError(f"{path}: {error.message}")
        if data["platform"] != path.stem:
            raise SpecError(f"{path}: platform {data['platform']!r} must equal the file name")
        platforms[path.stem] = data
    return platforms


def detect_platform(dmi: Any, platforms: dict[str, dict[str, Any]]) -> str:
    """The platform whose DMI strings match, else bare metal (what no file describes)."""
    if not isinstance(dmi, dict):
        return BARE_METAL
    product = dmi.get("product_name") or ""
    for name, data in platforms.items():
        match = data["match"]
        if dmi.get("sys_vendor") == match["sys_vendor"] and product.startswith(
            tuple(match["product_name_prefixes"])
        ):
            return name
    return BARE_METAL


def allowed(platforms: dict[str, dict[str, Any]], name: str, key: str) -> Any:
    """The platform's allowance for `key` (e.g. pcie_width 8), or None: the class's own."""
    entry = platforms.get(name, {}).get("allows", {}).get(key)
    return entry["value"] if entry else None


@cache
def _validator():
    """The platform schema's validator, built once: checking the schema itself on every load
    cost more than validating the files (the plugin loads them at each start)."""
    import jsonschema

    schema = json.loads(SCHEMA_FILE.read_text())
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)
