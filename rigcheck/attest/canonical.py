"""The one byte form of a JSON value that is signed and hashed: sorted keys, no spaces, UTF-8.

Key order and string escapes follow RFC 8785 (JCS); numbers are written as Python writes them,
which round-trips every float a certificate holds. Signer and verifier are both rigcheck, so
what matters is that one value always gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> bytes:
    """NaN and infinity are refused: JSON has no such numbers, and they would not round-trip."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)  # fmt: skip
    return text.encode("utf-8")


def sha256_of(value: Any) -> str:
    return hashlib.sha256(canonical_json(value)).hexdigest()
