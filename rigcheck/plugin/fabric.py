"""--fabric FILE: a site's node spec for the RDMA fabric, judged by suites/facts/test_fabric.py.

The class specs say what a GPU is; how many NICs a node has and at what rate is the site's
choice (an H100 cloud VM with one GPU has none; an ND H100 v5 has eight). A class may carry a
default in expect.fabric; a node spec given here replaces it. Both have the format of
expected/spec.schema.json#/$defs/fabric; docs/fabric/ has examples.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema
import pytest

from rigcheck.errors import SpecError
from rigcheck.jsonfile import read_json
from rigcheck.spec import SCHEMA_FILE, Spec

FABRIC_KEY = pytest.StashKey[dict | None]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("rigcheck").addoption(
        "--fabric",
        metavar="FILE",
        help="the node's expected RDMA fabric (e.g. docs/fabric/azure-nd-h100-v5.json); "
        "default: the class spec's expect.fabric, usually none",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("fabric", None)
    try:
        config.stash[FABRIC_KEY] = load_fabric_spec(path) if path else None
    except SpecError as exc:
        raise pytest.UsageError(str(exc)) from None


def load_fabric_spec(path: str) -> dict[str, Any]:
    data = read_json(path, "fabric node spec", SpecError)
    error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
    if error is not None:
        where = "$" + "".join(f".{p}" for p in error.absolute_path)
        raise SpecError(f"{path}: invalid fabric node spec at {where}: {error.message}")
    return data


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    return jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/fabric"})


@pytest.fixture(scope="session")
def fabric_expected(request: pytest.FixtureRequest, spec: Spec) -> dict[str, Any]:
    """The fabric this node must have; skipped with why where none is expected."""
    given = request.config.stash.get(FABRIC_KEY, None)
    expected = given or spec.data["expect"].get("fabric")
    if expected is None:
        pytest.skip(
            f"no RDMA fabric expected for {spec.name}: a site names its fabric with "
            "--fabric FILE (e.g. docs/fabric/azure-nd-h100-v5.json)"
        )
    return expected
