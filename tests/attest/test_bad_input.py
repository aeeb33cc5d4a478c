"""Every file keygen, attest and verify read, in every bad shape: one line on stderr saying
what is wrong, exit 2, no traceback (tests/hostile's rules, for these three commands)."""

from __future__ import annotations

import pytest
from attest_inputs import BAD, NONCE, SNAPSHOT, SPEC

from rigcheck.cli import main

COMMANDS = {
    "verify certificate": ["verify", "{BAD}", "--nonce", NONCE, "--key", "{PUB}"],
    "verify envelope": ["verify", "{RUN}", "--envelope", "{BAD}", "--nonce", NONCE, "--key",
                        "{PUB}"],
    "verify key": ["verify", "{RUN}", "--nonce", NONCE, "--key", "{BAD}"],
    "verify spec": ["verify", "{RUN}", "--nonce", NONCE, "--key", "{PUB}", "--spec", "{BAD}"],
    "verify facts": ["verify", "{RUN}", "--nonce", NONCE, "--key", "{PUB}", "--facts", "{BAD}"],
    "attest certificate": ["attest", "{BAD}", "--nonce", NONCE, "--key", "{KEY}"],
    "attest key": ["attest", "{RUN}", "--nonce", NONCE, "--key", "{BAD}", "-o", "{BAD}/../x"],
    "attest facts": ["attest", "{RUN}", "--nonce", NONCE, "--key", "{KEY}", "--facts", "{BAD}",
                     "-o", "{BAD}/../x"],
    "attest spec": ["attest", "{RUN}", "--nonce", NONCE, "--key", "{KEY}", "--facts",
                    str(SNAPSHOT), "--spec", "{BAD}", "-o", "{BAD}/../x"],
}  # fmt: skip
# A JSON array where an envelope belongs is read, then refused as no envelope (exit 3).
REFUSED = {("verify envelope", "array.json")}


@pytest.mark.parametrize("kind", BAD)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_bad_file_is_one_line_and_exit_2(good, command, kind, capsys):
    argv = [a.format(**{**good, "BAD": good["BAD"] / kind}) for a in COMMANDS[command]]
    code = main(argv)
    out, err = capsys.readouterr()
    if (command, kind) in REFUSED:
        assert code == 3 and out.startswith("refused  signature: not a DSSE envelope"), out
        return
    assert code == 2, out + err
    assert "Traceback" not in err and len(err.splitlines()) == 1 and out == "", err


def test_attest_with_a_spec_of_another_class_says_which_to_pass(good, capsys):
    a100 = SPEC.with_name("a100.json")
    code = main(["attest", good["RUN"], "--nonce", NONCE, "--key", good["KEY"], "--facts",
                 str(SNAPSHOT), "--spec", str(a100), "-o", str(good["BAD"] / "x")])  # fmt: skip
    assert code == 2
    assert capsys.readouterr().err == (
        f"rigcheck: {a100} is the spec of a100 v1, the run was judged against h100 v1: pass "
        "--spec with the file the run used\n"
    )
