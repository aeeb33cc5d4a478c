"""One line of `rigcheck verify`'s answer, and how the worst line sets the exit code."""

from __future__ import annotations

from dataclasses import dataclass

OK, NOTE, SHORT, REFUSED = "ok", "note", "short", "refused"
EXIT = {OK: 0, NOTE: 0, SHORT: 1, REFUSED: 3}  # docs/exit-codes.md
WORDS = {0: "accepted", 1: "authentic, but short", 3: "REFUSED"}


@dataclass(frozen=True)
class Finding:
    level: str
    text: str

    def line(self) -> str:
        return f"{self.level:<8} {self.text}"


def exit_code(findings: list[Finding]) -> int:
    return max(EXIT[f.level] for f in findings)


def final_word(findings: list[Finding]) -> str:
    """verify's last line: what the worst finding makes of the certificate."""
    return WORDS[exit_code(findings)]
