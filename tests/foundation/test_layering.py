"""The package's shape, as docs/architecture.md draws it: layers whose imports point one way.

Every import in rigcheck/ is read from the source (function-level ones too: a lazy import is
still a dependency). Each top-level module and each subpackage of rigcheck is one unit; each
unit sits in one layer. A unit may import its own layer and the layers below, never one above,
and no units import each other round a loop, at any depth (rigcheck.facts' own subpackages
included). The testing home is the top layer: nothing that ships to a machine under test
imports it. The pytest wiring lives in rigcheck/plugin/ alone.
"""

from __future__ import annotations

import ast
import itertools
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rigcheck"
SUITES = ROOT / "suites"
MAX_LINES = 500

# Bottom to top; docs/architecture.md explains each. A new module or package joins one here.
LAYERS: list[tuple[str, set[str]]] = [
    ("base", {"__init__", "errors", "jsonfile", "layout", "number_text", "paths", "progress"}),
    ("facts", {"facts"}),
    (
        "spec",
        {
            "figure_names",
            "spec",
            "spec_meaning",
            "look_alikes",
            "detect",
            "require",
            "limits",
            "verdict",
            "replay_rate",
            "platforms",
        },
    ),
    ("judging", {"measure", "burnin", "distributed", "rdma", "memory"}),
    ("records", {"reports", "gate", "history", "fleet", "attest", "blame"}),
    (
        "entry",
        {"__main__", "plugin", "check", "check_args", "check_help", "cli", "coverage_cli", "hint"},
    ),
    ("testing", {"testing"}),
]
LAYER_OF = {unit: i for i, (_, units) in enumerate(LAYERS) for unit in units}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, name: str | None = None) -> list[tuple[int, str]]:
    """(line, module) for every rigcheck import in the file, at any depth of the code."""
    found = []
    is_package = path.name == "__init__.py"
    here = (name or module_name(path)).split(".")
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here if is_package else here[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            # `from rigcheck.facts import nvidia` imports the subpackage nvidia; the package's
            # own __init__ counts only where a name comes from it
            subs = [f"{module}.{a.name}" for a in node.names]
            found += [(node.lineno, sub) for sub in subs]
            if not all(is_module(sub) for sub in subs):
                found.append((node.lineno, module))
    return [(line, m) for line, m in found if m == "rigcheck" or m.startswith("rigcheck.")]


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def existing(module: str) -> str:
    """The longest prefix of MODULE that is a module or package of rigcheck."""
    parts = module.split(".")
    while parts:
        path = ROOT.joinpath(*parts)
        if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
            return ".".join(parts)
        parts.pop()
    return module


def unit_of(module: str, package: str = "rigcheck") -> str | None:
    """The child of PACKAGE that MODULE lives in ('__init__' for the package itself)."""
    if module == package:
        return "__init__"
    if not module.startswith(package + "."):
        return None
    return module[len(package) + 1 :].split(".")[0]


def edges(package: str) -> dict[tuple[str, str], list[str]]:
    """(unit, unit) -> where, for imports between different children of PACKAGE."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    folder = ROOT.joinpath(*package.split("."))
    for path in sorted(folder.rglob("*.py")):
        source = unit_of(module_name(path), package)
        for line, module in imports_of(path):
            target = unit_of(existing(module), package)
            if target and source and target != source:
                found[(source, target)].append(f"{path.relative_to(ROOT)}:{line} {module}")
    return found


def a_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One loop in the graph, as the units round it; None when there is none."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (loop := visit(nxt)):
                return loop
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (loop := visit(node)):
            return loop
    return None


def packages() -> list[str]:
    return sorted(
        module_name(init.parent / "__init__.py")
        for init in PACKAGE.rglob("__init__.py")
        if "__pycache__" not in init.parts
    )


def test_every_unit_has_a_layer() -> None:
    units = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.parent.name for p in PACKAGE.glob("*/__init__.py")
    }
    missing = sorted(units - set(LAYER_OF))
    assert not missing, (
        f"rigcheck units in no layer: {missing}; put each in LAYERS here and in "
        "docs/architecture.md"
    )


def test_imports_point_down_the_layers() -> None:
    upward = [
        f"{where}: {source} ({LAYERS[LAYER_OF[source]][0]}) imports {target} "
        f"({LAYERS[LAYER_OF[target]][0]})"
        for (source, target), wheres in edges("rigcheck").items()
        if LAYER_OF.get(target, 0) > LAYER_OF.get(source, 0)
        for where in wheres
    ]
    assert not upward, "imports that point up the layers:\n" + "\n".join(upward)


@pytest.mark.parametrize("package", packages())
def test_no_two_parts_import_each_other(package: str) -> None:
    found = edges(package)
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in found:
        graph[source].add(target)
    loop = a_cycle(graph)
    where = [found[pair][0] for pair in itertools.pairwise(loop)] if loop else []
    assert loop is None, f"{package}: {' -> '.join(loop or [])} import round a loop:\n" + "\n".join(
        where
    )


def test_what_ships_never_imports_the_testing_home() -> None:
    shipped = [p for p in PACKAGE.rglob("*.py") if "testing" not in p.relative_to(PACKAGE).parts]
    shipped += list(SUITES.rglob("*.py"))
    found = [
        f"{path.relative_to(ROOT)}:{line} {module}"
        for path in shipped
        for line, module in imports_of(path)
        if module.startswith("rigcheck.testing")
    ]
    assert not found, "runtime code importing rigcheck.testing:\n" + "\n".join(found)


def hooks_and_fixtures(path: Path) -> list[str]:
    """Module-level pytest hooks, fixtures and pytest_plugins lists defined in the file."""
    tree = ast.parse(path.read_text())
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decorated = any("fixture" in ast.unparse(d) for d in node.decorator_list)
            if decorated or (node.name.startswith("pytest_") and path.name != "check.py"):
                found.append(node.name)
        elif isinstance(node, ast.Assign):
            found += [t.id for t in node.targets if getattr(t, "id", "") == "pytest_plugins"]
    return found


def test_the_pytest_wiring_is_in_one_place() -> None:
    # hint.py is the pytest11 entry point every pytest on the machine loads: it must stay
    # outside the plugin package, whose import pulls in the facts and the specs.
    allowed = {PACKAGE / "hint.py"}
    found = [
        f"{path.relative_to(ROOT)}: {', '.join(names)}"
        for path in PACKAGE.rglob("*.py")
        if "plugin" not in path.relative_to(PACKAGE).parts[:1]
        and "testing" not in path.relative_to(PACKAGE).parts[:1]
        and path not in allowed
        and (names := hooks_and_fixtures(path))
    ]
    assert not found, "pytest hooks or fixtures outside rigcheck/plugin/:\n" + "\n".join(found)


def test_no_file_in_the_package_is_over_500_lines() -> None:
    long = [
        f"{path.relative_to(ROOT)}: {n} lines"
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    ]
    assert not long, f"split these (at most {MAX_LINES} lines a file):\n" + "\n".join(long)


def test_a_loop_is_found_and_named() -> None:
    """The checker itself: a loop two deep and one three deep are found, a chain is not."""
    assert a_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_imports_are_read_at_every_depth(tmp_path: Path) -> None:
    """A lazy import inside a function is a dependency too, and a relative one resolves."""
    path = tmp_path / "collect.py"
    path.write_text(
        "import os\n"
        "from . import sibling\n"
        "def probe():\n"
        "    from rigcheck.facts import nvidia\n"
        "    import rigcheck.testing.synthetic\n"
    )
    found = {module for _, module in imports_of(path, "rigcheck.facts.collect")}
    assert found == {
        "rigcheck.facts",
        "rigcheck.facts.sibling",
        "rigcheck.facts.nvidia",
        "rigcheck.testing.synthetic",
    }


def test_the_architecture_page_draws_these_layers() -> None:
    """docs/architecture.md's layer table names every unit in the layer this file puts it."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    rows = {
        cells[1]: cells[2]
        for line in page.splitlines()
        if line.startswith("| ") and len(cells := [c.strip() for c in line.split("|")]) > 3
    }
    wrong = []
    for layer, units in LAYERS:
        row = rows.get(layer, "")
        wrong += [f"{layer}: {u}" for u in sorted(units) if f"`{u}`" not in row.replace("/`", "`")]
    assert not wrong, "docs/architecture.md's layer table misses:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    "path",
    sorted(p.relative_to(ROOT).as_posix() for p in (PACKAGE / "facts").rglob("*.py")),
)
def test_each_facts_file_opens_with_what_it_holds(path: str) -> None:
    first = (ROOT / path).read_text().splitlines()[0]
    words = first.strip('"').strip()
    assert first.startswith('"""') and len(words.split()) >= 6 and "/" not in words.split()[0], (
        f"{path}: its first line must say what it reads and how, not {first!r}"
    )
