"""Install AMD's amdsmi Python packages of older ROCm releases side by side (pip --target, one
folder each) for tests/amdsmi_real, which imports each over a simulated libamd_smi.

    python .ci/amdsmi_releases.py DEST      # DEST/6.0.0/amdsmi, DEST/6.1.1/amdsmi, ...

The newest (7.0.2) is tox's own dependency. ROCm 6.0 is the oldest release the AMD classes
allow; 6.1.1 is the last with power caps in watts and "No bad pages found.", 6.3.3 the last
without amdsmi_get_gpu_xgmi_link_status, 6.4.4 the last without the bad-page threshold.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RELEASES = ("6.0.0", "6.1.1", "6.2.4", "6.3.3", "6.4.4")


def main(dest: Path) -> None:
    for release in RELEASES:
        target = dest / release
        if (target / "amdsmi").is_dir():
            continue
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target"]
        subprocess.run([*pip, str(target), f"amdsmi=={release}"], check=True, timeout=300)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
