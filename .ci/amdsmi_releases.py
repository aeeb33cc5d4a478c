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
    # All at once: each pip spends most of its time starting up and asking the index, one core
    # each; in turn the five took about 10 s of CI's setup.
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target"]
    started = [
        (release, subprocess.Popen([*pip, str(dest / release), f"amdsmi=={release}"]))
        for release in RELEASES
        if not (dest / release / "amdsmi").is_dir()
    ]
    failed = [release for release, proc in started if proc.wait(timeout=300) != 0]
    if failed:
        raise SystemExit(f"pip could not install amdsmi {', '.join(failed)} (output above)")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
