#!/bin/sh
# Epilog addition: after a job that hung (its folder holds flight recorder dumps: NCCL's
# watchdog on a timeout with TORCH_NCCL_DUMP_ON_TIMEOUT=1, or rigcheck's stall dump; or the
# ncclras answers the job saved), ask
# `rigcheck blame` which rank held it up. Every node of the job runs it; only the node blame
# names AND finds a machine cause on (exit 1) drains itself. A clean node, another node's
# suspect, or a record blame cannot read changes nothing. docs/slurm/README.md.
set -u
here=$(dirname "$0")
RIGCHECK_PYTHON=/opt/rigcheck/.venv/bin/python
RIGCHECK_JOB_ROOT=/shared/rigcheck-jobs        # the jobs write JOB_DIR=$RIGCHECK_JOB_ROOT/$SLURM_JOB_ID
set -a
# shellcheck source=/dev/null
[ -r "$here/rigcheck.env" ] && . "$here/rigcheck.env"
set +a
export PATH="${PATH:-/usr/bin:/bin}:/usr/sbin:/usr/bin"
job_dir="$RIGCHECK_JOB_ROOT/${SLURM_JOB_ID:?}"
node="${SLURMD_NODENAME:?}"
hung=
for record in "$job_dir"/flight_recorder/* "$job_dir"/ncclras/*; do   # dumps or RAS answers
    [ -e "$record" ] && hung=1
done
[ -n "$hung" ] || exit 0   # neither: the job did not hang
line=$("$RIGCHECK_PYTHON" -m rigcheck blame "$job_dir" --node "$node" 2>&1)
code=$?
echo "rigcheck blame: node $node: exit $code: $line" >&2
if [ "$code" -eq 1 ]; then
    reason=$(printf '%s' "$line" | sed 's/^rigcheck blame: //' | cut -c1-150)
    scontrol update NodeName="$node" State=DRAIN Reason="rigcheck: blame: $reason" || exit 1
fi
exit 0   # a failing Epilog makes slurmd drain the node itself, for a fault that may not be its
