"""The core of the pytest plugin: class markers from the spec files, class selection, the fixtures.

Importing it is cheap (no torch): facts are collected only when a suite test is collected.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from rigcheck.detect import describe_devices, detect_class, expected_gpu_count, identity_problems
from rigcheck.errors import FactsError, SpecError, UnknownClassError
from rigcheck.facts import Facts, collect_facts, load_facts
from rigcheck.layout import SUITES_DIR
from rigcheck.number_text import int_option
from rigcheck.platforms import BARE_METAL, allowed, detect_platform, load_platforms
from rigcheck.spec import Spec, load_all, spec_dir

SUITE_MARKERS = {
    "facts": "fact checks: what the machine is (fast, no kernels beyond smoke tests)",
    "perf": "measurements: throughput judged against the class's figures",
    "memory": "memory-fit checks (--plan)",
    "distributed": "multi-process checks launched through torchrun",
    "slow": "checks that take more than a few seconds",
}
BOOLEAN_WORDS = {"and", "or", "not"}
ROOT_CHECKS = ("test_product_matches_class", "test_torch_imports")


@dataclass
class Target:
    """The class this session checks, how it was chosen, and the facts it is judged on."""

    spec: Spec | None
    how: str
    facts: Facts
    platform: str = BARE_METAL  # expected/platforms/NAME.json, or bare metal (the spec as written)


TARGET_KEY = pytest.StashKey[Target]()
SPECS_KEY = pytest.StashKey[dict]()
FACTS_KEY = pytest.StashKey[Facts]()
PLATFORMS_KEY = pytest.StashKey[dict]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rigcheck", "rigcheck: machine conformance")
    group.addoption(
        "--facts",
        metavar="FILE",
        help="judge a recorded facts snapshot (rigcheck facts -o FILE) instead of this machine",
    )
    group.addoption(
        "--platform",
        metavar="NAME",
        help="the platform the node runs on (aws_g4dn, aws_g6, ... from expected/platforms/, or "
        "bare_metal), instead of the one its firmware names (host.dmi)",
    )
    group.addoption(
        "--gpus",
        type=int_option,
        metavar="N",
        help="expected number of accelerators (default: the class's spec, e.g. 8 for l40s)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """A $RIGCHECK_EXPECTED_DIR that names no folder of specs, said before any plugin reads it."""
    try:
        spec_dir()
    except SpecError as exc:
        raise pytest.UsageError(f"rigcheck cannot read its spec files: {exc}") from None


def pytest_configure(config: pytest.Config) -> None:
    for name, help_text in SUITE_MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {help_text}")
    try:
        specs = load_all()
    except (SpecError, UnknownClassError) as exc:
        raise pytest.UsageError(f"rigcheck cannot read its spec files: {exc}") from None
    config.stash[SPECS_KEY] = specs
    for name, spec in specs.items():
        config.addinivalue_line("markers", f"{name}: check the machine against {spec.title}")
    _check_mark_expression(config, specs)
    _check_options(config)


MAX_GPUS = 1024  # more accelerators than any node has: a typo, not a machine


def _check_options(config: pytest.Config) -> None:
    """Bad options stop the run here, in one line, before any suite file is imported."""
    gpus = config.getoption("--gpus")
    if gpus is not None and not 1 <= gpus <= MAX_GPUS:
        raise pytest.UsageError(
            f"--gpus {gpus}: the number of accelerators this node must have, 1 to {MAX_GPUS} "
            "(leave it out to use the class's count)"
        )
    _check_platform(config)
    if config.getoption("--facts"):
        config.stash[FACTS_KEY] = _read_facts_file(config.getoption("--facts"))


def _check_platform(config: pytest.Config) -> None:
    try:
        config.stash[PLATFORMS_KEY] = load_platforms()
    except SpecError as exc:
        raise pytest.UsageError(f"rigcheck cannot read its platform files: {exc}") from None
    named = config.getoption("--platform")
    known = [*config.stash[PLATFORMS_KEY], BARE_METAL]
    if named is not None and named not in known:
        raise pytest.UsageError(f"--platform {named}: no such platform. Known: {', '.join(known)}")


def _check_mark_expression(config: pytest.Config, specs: dict[str, Spec]) -> None:
    """An unknown word in -m (a typo like a1000) would select nothing: make it a usage error.
    So is an expression pytest cannot parse: said now, before any plugin creates a folder."""
    _check_mark_syntax(config.option.markexpr)
    known = set(specs) | {line.split(":")[0].strip() for line in config.getini("markers")}
    for word in _words(config.option.markexpr):
        if word not in known:
            raise pytest.UsageError(
                f"-m {config.option.markexpr!r}: {word!r} is no device class or marker. "
                f"Known classes: {', '.join(specs)}"
            )
    named = [w for w in _words(config.option.markexpr) if w in specs]
    if len(set(named)) > 1:
        raise pytest.UsageError(
            f"-m {config.option.markexpr!r} names several classes ({', '.join(named)}): "
            "a run checks the machine against one class"
        )


def _check_mark_syntax(markexpr: str) -> None:
    try:  # pytest's own parser; private, so a pytest that moves it just skips this early check
        from _pytest.mark.expression import Expression
    except ImportError:
        return
    try:
        Expression.compile(markexpr or "")
    except Exception as exc:  # ParseError up to pytest 8, SyntaxError from 9
        raise pytest.UsageError(f"-m {markexpr!r}: {exc}") from None


def _words(markexpr: str) -> list[str]:
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", markexpr or "")
    return [w for w in words if w not in BOOLEAN_WORDS]


def is_suite_item(item: pytest.Item) -> bool:
    return _in_suites(str(item.path))


@functools.cache
def _in_suites(path: str) -> bool:
    """Once per file, not per check: resolving a path is a system call per part, and two
    hooks ask for each of a run's hundreds of checks."""
    return SUITES_DIR in Path(path).resolve().parents


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every suite check with the target class, before -m deselects anything."""
    suite_items = [item for item in items if is_suite_item(item)]
    if not suite_items:
        return
    target = resolve_target(config)
    for item in suite_items:
        if target.spec is not None:
            item.add_marker(target.spec.name)
    # Root causes run first: when the machine is the wrong product or torch is unusable, the
    # report names that before the checks that fail because of it.
    items.sort(key=lambda item: getattr(item, "originalname", item.name) not in ROOT_CHECKS)


def resolve_target(config: pytest.Config) -> Target:
    """Decide the class once per session: named in -m, or detected from the facts."""
    if TARGET_KEY in config.stash:
        return config.stash[TARGET_KEY]
    specs = config.stash[SPECS_KEY]
    facts = _session_facts(config)
    named = [w for w in _words(config.option.markexpr) if w in specs]
    if named:
        target = Target(specs[named[0]], "named with -m", facts)
    else:
        name, how = detect_class(facts, specs)
        target = Target(specs[name] if name else None, f"detected: {how}", facts)
    target.platform = config.getoption("--platform") or detect_platform(
        facts.data.get("host", {}).get("dmi"), config.stash[PLATFORMS_KEY]
    )
    config.stash[TARGET_KEY] = target
    return target


def _session_facts(config: pytest.Config) -> Facts:
    if FACTS_KEY in config.stash:  # --facts, read at configure time
        return config.stash[FACTS_KEY]
    return collect_facts()


def _read_facts_file(path: str) -> Facts:
    try:
        return load_facts(path)
    except FactsError as exc:
        raise pytest.UsageError(
            f"--facts: {exc}. Record one with `rigcheck facts -o FILE`"
        ) from None


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    target = config.stash.get(TARGET_KEY, None)
    if target is None:
        return []
    origin = target.facts.origin
    source = config.getoption("--facts") or "this machine (live)"
    kind = origin.get("kind", "?")
    lines = [
        f"rigcheck: facts from {source} [{kind}]: {describe_devices(target.facts)}",
        f"rigcheck: {software_summary(target.facts)}",
    ]
    if target.spec is None:
        lines.append(f"rigcheck: NO CLASS — {target.how}")
    else:
        lines.append(f"rigcheck: class {target.spec.name} ({target.spec.title}), {target.how}")
    return lines


def software_summary(facts: Facts) -> str:
    """torch, its CUDA, the driver and the TF32 switch, as the header reports them."""
    torch = facts.find("software.torch", {})
    if not isinstance(torch, dict) or "error" in torch:
        return f"torch unusable: {torch.get('error') if isinstance(torch, dict) else torch}"
    build = torch.get("cuda_version") or torch.get("hip_version") or torch.get("build")
    driver = facts.find("software.nvidia_driver.version")
    tf32 = torch.get("tf32_matmul_allowed")
    return (
        f"torch {torch.get('version')} ({build})"
        + (f", driver {driver}" if isinstance(driver, str) else "")
        + f", TF32 matmul {'allowed' if tf32 else 'off'} (torch.backends.cuda.matmul.allow_tf32)"
    )


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> Target:
    return resolve_target(request.config)


@pytest.fixture(scope="session")
def facts(target: Target) -> Facts:
    """The facts snapshot this session judges: live, or replayed with --facts."""
    return target.facts


@pytest.fixture(scope="session")
def spec(target: Target) -> Spec:
    """The spec of the class under test; fails every check when no class fits this machine."""
    if target.spec is None:
        pytest.fail(f"no device class for this machine: {target.how}", pytrace=False)
    return target.spec


@pytest.fixture(scope="session")
def platform_width(request: pytest.FixtureRequest, target: Target) -> int | None:
    """The PCIe width the node's platform wires its GPUs at, where narrower than the board's
    (expected/platforms/); None on bare metal: the board's own maximum."""
    return allowed(request.config.stash[PLATFORMS_KEY], target.platform, "pcie_width")


@pytest.fixture(scope="session")
def expected_gpus(request: pytest.FixtureRequest, spec: Spec, facts: Facts) -> int:
    """How many accelerators the machine must have: --gpus, else a node size the class comes
    in (rigcheck.detect.expected_gpu_count)."""
    override = request.config.getoption("--gpus")
    return expected_gpu_count(spec, len(facts.devices), override)


@pytest.fixture(scope="session")
def devices(facts: Facts, spec: Spec) -> list[dict]:
    """The accelerators, for checks that judge them; skipped when they are the wrong product.

    A wrong product already fails test_identity.py with both classes named; judging an
    A100's ECC against the H100 spec would only repeat that failure a dozen times.
    """
    problems = identity_problems(facts, spec)
    if problems:
        pytest.skip(f"not a {spec.name} machine (test_identity fails): {problems[0]}")
    return facts.devices
