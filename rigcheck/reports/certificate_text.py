"""The certificate's JSON text while a run goes: rewritten after every check (a killed run leaves
a valid partial certificate), but the machine and each finished check are masked and serialized
once and their text kept, so a rewrite joins texts instead of masking and dumping the whole
document again (issue 43: that made judging grow as GPUs³). The text is exactly
`json.dumps(masked certificate, indent=2)`; the final certificate is still built in full."""

from __future__ import annotations

import json
from typing import Any

from rigcheck.reports.masking import longest_first, masked_in_order, secrets_in

INDENT = "  "


class CertificateText:
    def __init__(self, machine: dict[str, Any], unmask: bool):
        self.order = () if unmask else longest_first(secrets_in(machine))
        self.kept: dict[int, tuple[Any, str]] = {}  # id -> (the part, held so no id is reused)

    def forget(self, part: Any) -> None:
        """A check changed after it was kept (a warning pytest reports after its teardown)."""
        self.kept.pop(id(part), None)

    def render(self, certificate: dict[str, Any]) -> str:
        """The unmasked certificate (build_certificate(..., unmask=True)) as masked JSON text."""
        fields = []
        for key, value in certificate.items():
            if key == "machine":
                text = self._kept(value, 1)
            elif key == "checks" and value:
                inner = INDENT * 2
                text = "[\n" + ",\n".join(inner + self._kept(c, 2) for c in value) + "\n  ]"
            else:
                text = self._dump(value, 1)
            fields.append(f"{INDENT}{json.dumps(key)}: {text}")
        return "{\n" + ",\n".join(fields) + "\n}\n"

    def _kept(self, part: Any, depth: int) -> str:
        found = self.kept.get(id(part))
        if found is None:
            found = self.kept[id(part)] = (part, self._dump(part, depth))
        return found[1]

    def _dump(self, value: Any, depth: int) -> str:
        # JSON strings hold no raw newline, so every newline of the dump starts a line.
        text = json.dumps(masked_in_order(value, self.order), indent=2)
        return text.replace("\n", "\n" + INDENT * depth)
