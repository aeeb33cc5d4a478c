"""Property: one broken fact a check judges never passes and never crashes the suite.

Each example takes a class's good snapshot, breaks one fact that class's checks judged on
it (recorded by the typed accessor while the good snapshot was replayed, so no hand list),
with one type-level mutation (null, "N/A", "[Not Supported]", "Enabled", "16", [], {}, a
deleted key, a number of the wrong kind), replays `-m "CLASS and facts"` in this process, and
asserts a failure naming the fact or a usage error naming the field.

A run takes one turn of the classes (tests/class_turns.py: a third of them, in turn from
commit to commit) and 4 examples per class taken (40 for a turn of 9 classes, the ci profile's
floor: about 45 s on CI's 2-core machine, each example collecting the whole facts suite; 7.4 a
class took 80 s, the longest self-test); every class, and longer:
    RIGCHECK_ALL_CLASSES=1 pytest tests/replay/test_fact_mutations.py \
        --hypothesis-profile=facts-long
or the seeded fuzz: python -m rigcheck.testing.fuzz --seed 1 --count 500
"""

import math

import pytest
from class_turns import this_turn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rigcheck.spec import known_classes
from rigcheck.testing import fuzz, mutations

CLASSES = this_turn(known_classes())
GOODS = {name: fuzz.good_snapshot(name) for name in CLASSES}
settings.register_profile("facts-long", max_examples=2000, deadline=None)
PER_CLASS = 4  # examples per class of the turn (tests/class_turns.py)
# The loaded profile may ask for more, not fewer.
EXAMPLES = max(math.ceil(PER_CLASS * len(CLASSES)), settings().max_examples)


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """Each class's judged facts, that still exist and have a mutation that breaks them."""
    work = tmp_path_factory.mktemp("judged")
    with fuzz.cached_specs():
        return {name: fuzz.judged_paths(name, GOODS[name], work) for name in CLASSES}


@pytest.fixture(scope="module")
def specs_once():
    with fuzz.cached_specs():
        yield


def test_every_class_judges_facts_through_the_accessor(judged):
    """A class whose checks judge no fact would make the property below vacuous."""
    assert all(judged[name].paths for name in CLASSES), {n: len(j.paths) for n, j in judged.items()}


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_broken_judged_fact_fails_naming_it(judged, specs_once, tmp_path, data):
    name = data.draw(st.sampled_from(CLASSES), label="class")
    good = GOODS[name]
    path = data.draw(st.sampled_from(judged[name].paths), label="fact")
    how = data.draw(st.sampled_from(judged[name].breaking(path, good)), label="mutation")
    result = fuzz.replay(mutations.mutate(good, path, how), name, tmp_path)
    verdict = mutations.classify(
        result.ret, result.failed, result.errors, result.output, path, good
    )
    assert verdict in (mutations.GOOD, mutations.USAGE), (
        f"{name}: {path} = {how}: {verdict}\nfailed: {list(result.failed)}\n"
        f"errors: {result.errors}\n{result.output[-2500:]}"
    )
