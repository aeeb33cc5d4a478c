"""The report page in a real browser: headless Chromium renders it, with its verdict and plots.

Skips when Chromium is not installed (apt-get install chromium), unless
RIGCHECK_REQUIRE_CHROMIUM=1, which CI sets so that the check can never be skipped quietly there.
"""

import struct
import subprocess
import zlib
from pathlib import Path

from rigcheck.reports.certificate import load_certificate
from rigcheck.reports.html import HEADLINES, write_html

AFTER = Path(__file__).resolve().parents[2] / "fixtures" / "certificates" / "h100-node-after.json"
WIDTH, HEIGHT = 1280, 1600
# html.py's header colours, by verdict
BANNER = {
    "pass": (0x2E, 0x85, 0x40),
    "warn": (0xB8, 0x74, 0x00),
    "fail": (0xC6, 0x28, 0x28),
    "incomplete": (0x5B, 0x65, 0x70),
}
TOP_ROWS = 480  # decoding the top of the screenshot is enough: banner, failures, first plot


def browse(chromium: str, page: Path, tmp_path: Path, *what: str) -> subprocess.CompletedProcess:
    command = [
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
        f"--window-size={WIDTH},{HEIGHT}", *what, page.as_uri(),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def rendered(chromium: str, page: Path, tmp_path: Path) -> tuple[str, tuple, list[list[tuple]]]:
    """The DOM after rendering, and the screenshot's size and top rows of pixels."""
    dom = browse(chromium, page, tmp_path, "--dump-dom").stdout
    png = tmp_path / f"{page.stem}.png"
    browse(chromium, page, tmp_path, f"--screenshot={png}")
    return dom, *read_png(png.read_bytes(), TOP_ROWS)


def test_a_failing_node_renders_its_verdict_failures_and_plots(chromium, tmp_path):
    page = tmp_path / "report.html"
    write_html(page, load_certificate(AFTER))
    dom, size, pixels = rendered(chromium, page, tmp_path)
    assert '<div class="headline">DOES NOT CONFORM</div>' in dom
    assert dom.index("Failures: what to do (2)") < dom.index("Measured figures")
    assert dom.count('<svg class="plot"') == 2 and dom.count('class="floor"') == 2
    assert "across 2 devices" in dom
    assert size == (WIDTH, HEIGHT)
    assert pixels[20][20] == BANNER["fail"]  # the verdict banner, drawn with its CSS
    assert len({p for row in pixels[::4] for p in row[::4]}) > 50, "the page looks blank"


def test_the_cpu_run_page_renders_its_verdict(chromium, cpu_run, tmp_path):
    _, out = cpu_run
    verdict = load_certificate(out)["verdict"]
    dom, size, pixels = rendered(chromium, out / "report.html", tmp_path)
    assert f'<div class="headline">{HEADLINES[verdict]}</div>' in dom
    assert '<section id="machine">' in dom
    assert size == (WIDTH, HEIGHT)
    assert pixels[20][20] == BANNER[verdict]


def read_png(data: bytes, max_rows: int) -> tuple[tuple[int, int], list[list[tuple]]]:
    """(width, height) and the top RGB rows of an 8-bit RGB/RGBA non-interlaced PNG, which is
    what Chromium writes; pure Python, so only the rows a check needs are decoded."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        header = struct.unpack(">IIBBBBB", body) if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    channels = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * channels
    rows, previous = [], bytearray(stride)
    for y in range(min(height, max_rows)):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            line[i] = (line[i] + _predict(kind, left, up, corner)) & 0xFF
        rows.append([tuple(line[x : x + 3]) for x in range(0, stride, channels)])
        previous = line
    return (width, height), rows


def _predict(kind: int, left: int, up: int, corner: int) -> int:
    if kind == 0:
        return 0
    if kind == 1:
        return left
    if kind == 2:
        return up
    if kind == 3:
        return (left + up) // 2
    p = left + up - corner  # Paeth
    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
    return left if pa <= pb and pa <= pc else up if pb <= pc else corner
