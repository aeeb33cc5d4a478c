"""Markdown for a CI job summary from a run folder's certificate.json (standard library only).

python3 docs/ci_summary.py reports/machine >> "$GITHUB_STEP_SUMMARY"
"""

import json
import sys
from pathlib import Path

HEADLINES = {
    "pass": "CONFORMS",
    "warn": "CONFORMS, WITH WARNINGS",
    "fail": "DOES NOT CONFORM",
    "incomplete": "INCOMPLETE",
}


def summary(run_dir: Path) -> str:
    path = run_dir / "certificate.json"
    if not path.exists():
        return f"### rigcheck: no certificate in {run_dir} (no suite check ran)\n"
    cert = json.loads(path.read_text())
    s = cert["summary"]
    counts = ", ".join(f"{s[k]} {k}" for k in ("pass", "warn", "fail", "skip", "xfail"))
    paragraphs = [
        f"### rigcheck: {HEADLINES[cert['verdict']]} — class {cert['class']['name']}",
        f"{s['done']} of {s['selected']} checks: {counts}; exit status {cert['exit_status']}",
    ]
    if cert["partial"]:
        paragraphs.append(f"**Partial:** {cert['partial_reason']}")
    failures = [
        f"- **{c['name']}**: {(c['message'] or 'failed').splitlines()[0]}"
        for c in cert["checks"]
        if c["outcome"] == "fail"
    ]
    if failures:
        paragraphs.append("\n".join(failures))
    return "\n\n".join(paragraphs) + "\n"


if __name__ == "__main__":
    sys.stdout.write(summary(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
