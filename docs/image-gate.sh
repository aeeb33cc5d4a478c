#!/usr/bin/env bash
# The image gate, run INSIDE the image under test with this checkout mounted (docs/ci-gate.md):
#
#   docker run --rm --gpus all --ipc=host -v "$PWD:/rigcheck" -w /rigcheck IMAGE \
#       bash docs/image-gate.sh h100
#
# The image's torch, CUDA, NCCL and flash-attn are what is tested, so nothing the image already
# has may change: rigcheck's own dependencies are installed with every installed package pinned
# to its current version (pip fails rather than upgrade or downgrade one), and torch's version is
# compared before and after. Extra arguments go to pytest. Exit status: pytest's (docs/exit-codes.md).
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1  # no root-owned __pycache__ left in the mounted checkout

class="${1:?usage: bash docs/image-gate.sh CLASS [pytest arguments...]}"
shift
python="${PYTHON:-python3}"
work="$(mktemp -d)"

torch_version() {
    "$python" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo "(no torch)"
}

"$python" -m pip list --format=freeze --disable-pip-version-check > "$work/image-packages.txt"
before="$(torch_version)"

# A throwaway container may add packages; PIP_BREAK_SYSTEM_PACKAGES lets pip do so in images
# whose Python is marked externally managed (PEP 668). The -c pins keep every existing package.
PIP_BREAK_SYSTEM_PACKAGES=1 "$python" -m pip install --quiet --disable-pip-version-check \
    --constraint "$work/image-packages.txt" --editable .

after="$(torch_version)"
if [ "$before" != "$after" ]; then
    echo "image-gate: torch changed from $before to $after while installing rigcheck: refusing" >&2
    exit 3
fi
echo "image-gate: testing the image's own torch $after" >&2

reports="${RIGCHECK_GATE_REPORTS:-reports/image-gate}"
status=0
"$python" -m pytest -p no:cacheprovider -m "$class" --report-dir "$reports" "$@" || status=$?

# Run as root (docker's default), the container would leave root-owned files in the runner's
# checkout; hand what it wrote back to the checkout's owner.
if [ "$(id -u)" = 0 ]; then
    owner="$(stat -c %u:%g .)"
    for path in "$reports" rigcheck.egg-info .benchmarks build; do
        if [ -e "$path" ]; then chown -R "$owner" "$path"; fi
    done
fi
exit "$status"
