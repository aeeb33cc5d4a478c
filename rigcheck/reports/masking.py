"""Serial numbers and UUIDs identify one physical board: reports shared outside keep them masked."""

from __future__ import annotations

import re
from typing import Any

SECRET_KEY = re.compile(r"serial|uuid", re.IGNORECASE)
SHOWN_CHARS = 4  # the tail stays visible, so two reports of one machine still line up


def mask(value: str) -> str:
    """'1654321098765' -> 'masked…8765'; short values are masked whole."""
    tail = value[-SHOWN_CHARS:] if len(value) > 2 * SHOWN_CHARS else ""
    return f"masked…{tail}"


def secrets_in(data: Any) -> set[str]:
    """Every string held under a serial or UUID key, anywhere in a facts snapshot."""
    found: set[str] = set()

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and SECRET_KEY.search(key) and len(node) >= SHOWN_CHARS:
            found.add(node)

    walk(data)
    return found


def masked(data: Any, secrets: set[str]) -> Any:
    """A copy of any JSON value with each secret replaced wherever it appears, in any string."""
    return masked_in_order(data, longest_first(secrets))


def longest_first(secrets: set[str]) -> tuple[str, ...]:
    """Longest first, so a serial inside a longer UUID string cannot leave a visible remainder.
    Sorted once per document: sorting per string made masking grow as strings x secrets."""
    return tuple(sorted(secrets, key=len, reverse=True))


def masked_in_order(data: Any, order: tuple[str, ...]) -> Any:
    if isinstance(data, dict):
        return {k: masked_in_order(v, order) for k, v in data.items()}
    if isinstance(data, list):
        return [masked_in_order(v, order) for v in data]
    if isinstance(data, str):
        return _scrub(data, order)
    return data


def scrub(text: str, secrets: set[str]) -> str:
    return _scrub(text, longest_first(secrets))


def _scrub(text: str, order: tuple[str, ...]) -> str:
    if len(text) < SHOWN_CHARS:  # shorter than any secret (secrets_in keeps none shorter)
        return text
    for secret in order:
        if secret in text:
            text = text.replace(secret, mask(secret))
    return text
