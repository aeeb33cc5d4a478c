"""`rigcheck --help` lists every subcommand without importing their modules (issue 43: pytest,
jsonschema and rich were imported for help), and its help lines are the modules' own."""

import argparse
import subprocess
import sys

from rigcheck.cli import ALL, COMMANDS, build_parser

HEAVY = ("pytest", "jsonschema", "rich", "sqlalchemy", "torch")


def help_lines(parser: argparse.ArgumentParser) -> dict[str, str]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: a.help for a in sub._choices_actions}


def test_the_listed_help_lines_are_the_modules_own():
    assert help_lines(build_parser(None)) == help_lines(build_parser(ALL))
    assert set(COMMANDS) < set(help_lines(build_parser(ALL)))


def test_help_imports_no_heavy_module():
    code = (
        "import sys\nfrom rigcheck.cli import main\ntry:\n    main(['--help'])\n"
        "except SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert "fleet" in done.stdout and "blame" in done.stdout  # every command is still listed


def test_each_command_alone_gets_its_own_parser():
    """`rigcheck report` imports rigcheck.reports.cli, which adds diff beside it: no conflict."""
    whole = build_parser(ALL)
    for name in ["detect", "facts", *COMMANDS]:
        parser = build_parser(name)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        full = next(a for a in whole._actions if isinstance(a, argparse._SubParsersAction))
        shown = [a.dest for a in sub.choices[name]._actions]
        assert shown == [a.dest for a in full.choices[name]._actions], name
