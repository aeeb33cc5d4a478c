"""A renter's own spec applied offline to what a certificate signed: the class identity of its
facts, and every signed figure judged again by rigcheck's own judge against the renter's tiers."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from rigcheck.attest.finding import NOTE, OK, SHORT, Finding
from rigcheck.detect import identity_problems
from rigcheck.facts import Facts
from rigcheck.spec import Spec
from rigcheck.verdict import FAIL, WARN, judge


def rejudge(predicate: dict[str, Any], machine: dict[str, Any], spec: Spec) -> list[Finding]:
    """`machine` is the certificate's facts snapshot, already matched to its signed hash."""
    from rigcheck.measure.check import figure_for  # pytest comes with it: only for --spec

    certified_class = (predicate.get("class") or {}).get("name")
    if spec.name != certified_class:
        return [
            Finding(
                SHORT, f"your spec is of class {spec.name}, the certificate of {certified_class}"
            )
        ]
    found = [_same_spec(predicate, spec.path)]
    facts = Facts(machine)
    found += [
        Finding(SHORT, f"identity: {p}") for p in identity_problems(facts, spec, {spec.name: spec})
    ]
    judged, measured = 0, set()
    for check_id, check in (predicate.get("checks") or {}).items():
        for figure in check.get("figures") or []:
            if figure.get("measured") is None:
                continue
            key = figure["figure"]
            measured.add(key)
            judged += 1
            judgement = judge(key, figure["measured"], figure_for(spec, facts, key))
            where = f"{key} ({figure.get('label') or check_id})"
            if judgement.verdict == FAIL:
                found.append(
                    Finding(SHORT, f"{where}: falls short of your spec: {judgement.reason}")
                )
            elif judgement.verdict == WARN:
                found.append(Finding(NOTE, f"{where}: {judgement.reason}"))
    found.append(Finding(OK, f"re-judged {judged} signed figures against {spec.path}"))
    return found + _not_measured(spec, measured)


def _same_spec(predicate: dict[str, Any], path: Path) -> Finding:
    yours = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    if yours == predicate.get("spec_sha256"):
        return Finding(OK, f"spec: {path} is the very spec the run was judged against")
    return Finding(
        NOTE,
        f"spec: {path} (sha256 {yours[:16]}) is not the spec the run was judged against "
        f"(sha256 {str(predicate.get('spec_sha256'))[:16]}): its figures are judged again below",
    )


def _not_measured(spec: Spec, measured: set[str]) -> list[Finding]:
    """Figures your spec has a floor for that the run did not measure (not applicable to the
    node, or skipped): named, so a renter who needs them asks for them."""
    missing = sorted(k for k, f in spec.figures.items() if f.get("floor") and k not in measured)
    if not missing:
        return []
    return [
        Finding(
            NOTE, f"not measured in this run, though your spec has floors: {', '.join(missing)}"
        )
    ]
