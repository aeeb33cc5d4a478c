#!/bin/sh
# rigcheck as Slurm's HealthCheckProgram, Prolog and Epilog: one script, the mode from Slurm's
# SLURM_SCRIPT_CONTEXT (prolog_slurmd, epilog_slurmd; unset for the HealthCheckProgram).
# slurm.conf takes a path without arguments, so the settings come from rigcheck.env beside
# this script. docs/slurm/README.md; tests/slurm/test_gate_on_slurm.py runs it through slurmd.
set -eu
here=$(dirname "$0")
RIGCHECK_PYTHON=/opt/rigcheck/.venv/bin/python   # a Python with rigcheck installed
RIGCHECK_CLASS=                                   # e.g. h100; empty: detected
RIGCHECK_TIER_BUDGET=                             # seconds; empty: the quick tier's 10
# set -a: every line of rigcheck.env is exported, so RIGCHECK_GATE_DIR and the other variables
# rigcheck itself reads reach it whether or not the file says `export`.
set -a
# shellcheck source=/dev/null
[ -r "$here/rigcheck.env" ] && . "$here/rigcheck.env"
set +a
export PATH="${PATH:-/usr/bin:/bin}:/usr/sbin:/usr/bin"
case "${SLURM_SCRIPT_CONTEXT:-}" in
    prolog_slurmd) mode=prolog ;;
    epilog_slurmd) exec "$RIGCHECK_PYTHON" -m rigcheck slurm epilog ;;
    *) mode=health ;;
esac
# shellcheck disable=SC2086  # an empty class is no argument
exec "$RIGCHECK_PYTHON" -m rigcheck slurm "$mode" $RIGCHECK_CLASS \
    ${RIGCHECK_TIER_BUDGET:+--tier-budget="$RIGCHECK_TIER_BUDGET"}
