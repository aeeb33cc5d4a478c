"""JUnit XML by pytest's own writer, into the run folder; measured figures as properties."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _pytest.junitxml import LogXML, xml_key

from rigcheck.verdict import PROPERTY


def open_junit(config: pytest.Config, path: Path) -> bool:
    """Register pytest's LogXML writing `path`, unless --junitxml already asked; True if opened.

    The same object `--junitxml` creates, registered once the run is known to check a machine,
    so a run of other tests writes no junit.xml.
    """
    if config.option.xmlpath or xml_key in config.stash:
        return False
    xml = LogXML(
        str(path),
        config.option.junitprefix,
        config.getini("junit_suite_name"),
        config.getini("junit_logging"),
        config.getini("junit_duration_report"),
        "xunit1",  # per-test <properties> (measured, expected, unit) belong to xunit1
        config.getini("junit_log_passing_tests"),
    )
    xml.pytest_sessionstart()
    config.stash[xml_key] = xml
    config.pluginmanager.register(xml)  # junitxml's own unconfigure unregisters it
    return True


def add_figure_properties(item: pytest.Item) -> None:
    """Each recorded Judgement as flat properties, before the teardown report copies them."""
    for name, value in list(item.user_properties):
        if name == PROPERTY and isinstance(value, dict):
            item.user_properties.extend(figure_properties(value))


def figure_properties(judgement: dict[str, Any]) -> list[tuple[str, Any]]:
    """One measured figure as junit properties a CI system can chart."""
    ratio = judgement.get("ratio_to_datasheet")
    return [
        ("figure", judgement.get("figure")),
        ("measured", judgement.get("measured")),
        ("unit", judgement.get("unit")),
        ("expected", judgement.get("floor")),  # the floor is what the class requires
        ("verdict", judgement.get("verdict")),
        ("achievable", judgement.get("achievable")),
        ("datasheet", judgement.get("datasheet")),
        ("ratio_to_datasheet", None if ratio is None else round(ratio, 4)),
    ]
