"""amdgpu's fault lines in the kernel log (AMD's counterpart of NVIDIA's Xid), and what each
means, whose fault it is and what to do.

amdgpu prints through dev_info/dev_err, so every line starts `amdgpu 0000:75:00.0: ` (some add
`amdgpu: ` after it). The probe keeps every amdgpu line a pattern below matches (time, bus id,
text); the check classifies the text, so an old snapshot is judged by today's table. Each
pattern is a format string of the amdgpu driver (drivers/gpu/drm/amd/amdgpu/ in Linux):

- amdgpu_ras.c: "%ld uncorrectable hardware errors detected in %s block" (the RAS manager of
  newer kernels: "{%llu} socket: %d, die: %d, %u new uncorrectable hardware errors detected in
  %s block"), and amdgpu_ras_global_ras_isr's "{%llu} Uncorrectable hardware error
  (ERREVENT_ATHUB_INTERRUPT) detected!" — a fatal error: the driver resets the GPU.
- amdgpu_ras_eeprom.c: "RAS records:%u exceeds 90%% of threshold", "RAS records:%d exceed
  threshold:%d" — retired HBM pages near or at the RMA threshold.
- amdgpu_job.c, amdgpu_job_timedout: "ring %s timeout, signaled seq=%u, emitted seq=%u" (a
  hung ring the driver resets); "ring %s timeout, but soft recovered" (one job killed).
- amdgpu_device.c, amdgpu_device_gpu_recover: "GPU reset begin!", "GPU reset(%d) failed" (and
  "Mode2 reset failed", as AMD's node-scraper reads it).
- kfd_int_process_v9.c / umc: "poison is consumed by client %d, kick off gpu reset flow",
  "Poison is created" -- RAS poison, logged at warning.
- gmc_v9_0.c: "[%s] %s page fault (src_id:%u ring:%u vmid:%u pasid:%u...)" — a program's
  illegal address (like NVIDIA's Xid 31): the program's fault, not the machine's.

- amdgpu_ring.c (Linux 6.12 and later, per-queue reset): "Ring %s reset failed" — the driver
  could not reset one ring and falls back to a full GPU reset.
- amdgpu_aca.c (MI300 and later): "{%llu}[Hardware Error]: Accelerator Check Architecture events
  logged", followed by the "aca entry[..]" register lines: a hardware error record.

"no uncorrectable hardware errors detected in umc block" is amdgpu's all-clear: the patterns
need a count before "uncorrectable", so it never matches.

Some lines carry no PCI prefix: `[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0
timeout, ...` (DRM_ERROR of kernels before 6.10). Such a line is tied to its GPU where the log
allows (parse_amdgpu_lines): the prefixed amdgpu lines within a few lines of it name one GPU
(the driver logs "amdgpu 0000:..: GPU reset begin!" right after a timeout), or the whole log
names only one. Otherwise it keeps no bus id and the check fails the node naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rigcheck.facts.kernel_log import line_form

SOURCE = (
    "the amdgpu kernel driver's messages (Linux drivers/gpu/drm/amd/amdgpu/: amdgpu_ras.c, "
    "amdgpu_ras_eeprom.c, amdgpu_job.c, amdgpu_device.c, gmc_v9_0.c)"
)
# "amdgpu 0000:75:00.0: amdgpu: ..." (dev_info/dev_err's prefix: driver name, PCI function).
PREFIX = re.compile(
    r"\bamdgpu (?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d):\s*(?P<text>.*)"
)
# A line amdgpu printed without dev_err's prefix: DRM_ERROR's "[drm:amdgpu_job_timedout [amdgpu]]"
# or "[drm:mes_v11_0_submit_pkt_and_poll_completion.constprop.0 [amdgpu]]", or pr_err's
# "amdgpu: " (the driver core's "amdgpu: probe of 0000:03:00.0 failed with error -22"), or
# older kernels' "[drm] VRAM is lost due to GPU reset!" (DRM_INFO, amdgpu's text).
UNPREFIXED = re.compile(
    r"(?:\[drm:[\w.]+ \[amdgpu\]\]\s*(?:\*ERROR\*\s*)?|(?<![\w-])amdgpu:\s+|"
    r"\[drm\]\s+(?=VRAM is lost))(?P<text>.*)"
)
NAMED_BDF = re.compile(r"\b[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d\b")
# A MODE1/MODE2 reset is also how amdgpu brings a GPU up at boot or back from suspend: there it
# is no fault. Judged by what precedes it (parse_amdgpu_lines sets the event's "context").
BOOT_S = 60.0  # a reset stamped this soon after boot, with no fault before it, is bring-up
RESUME = re.compile(
    r"\bPM: (?:suspend|resume|hibernation)|\bresum(?:e|ing)\b|Restarting tasks", re.I
)
FAULT_BEFORE = re.compile(r"GPU reset begin|MES|timeout|hang|RAS|uncorrectable|wedged", re.I)
CONTEXT_LINES = 30
NEAR = 3  # lines around an unprefixed line in which a prefixed line names its GPU
RESET = "drain the node, reset the GPU (`amd-smi reset -G -g <gpu>`) or reboot"
RMA = "if it recurs, ask the provider to replace the GPU (RMA)"


@dataclass(frozen=True)
class AmdgpuFault:
    name: str
    pattern: re.Pattern
    meaning: str
    cause: str  # "machine", "driver" or "application", as xid_catalog.Xid.cause
    action: str


CATALOGUE = (
    AmdgpuFault(
        "ras_uncorrectable",
        re.compile(
            r"\b[1-9]\d* (?:new )?uncorrectable hardware errors detected in "
            r"(?:total in )?\w+ block",
            re.I,
        ),
        "uncorrectable ECC/RAS errors in a RAS block (UMC: HBM)",
        "machine",
        f"{RESET}; `amd-smi metric --ecc --ecc-blocks` shows the counts; {RMA}",
    ),
    AmdgpuFault(
        "ras_fatal",
        re.compile(r"uncorrectable hardware error\s*\(ERREVENT_ATHUB_INTERRUPT\) detected", re.I),
        "a fatal hardware error (ERREVENT_ATHUB_INTERRUPT): the driver had to reset the GPU",
        "machine",
        f"{RESET}; {RMA}",
    ),
    # amdgpu_ras_eeprom.c also says it as "Saved bad pages(%d) reaches threshold value(%d)."
    # (dev_warn: warning level, so only a rule sees it; AMD's node-scraper reads both spellings)
    AmdgpuFault(
        "bad_pages_threshold",
        re.compile(
            r"RAS records:\s*\d+ exceeds? (?:90% of )?threshold|"
            r"Saved bad pages\s*\(?\d+\)? reaches threshold value",
            re.I,
        ),
        "retired HBM pages near or past the driver's bad-page threshold (RMA point)",
        "machine",
        "ask the provider to replace the GPU (RMA); `amd-smi bad-pages` lists the pages",
    ),
    # kfd_int_process_v9.c: "poison is consumed by client %d, kick off gpu reset flow"
    # (dev_warn, later RAS_EVENT_LOG with a "{%llu}" event id) and the UMC's "Poison is created":
    # an uncorrectable memory error's poisoned data, at warning level, so only a rule sees it.
    AmdgpuFault(
        "ras_poison",
        re.compile(r"poison is consumed by client \d+|\bPoison is created\b", re.I),
        "an uncorrectable memory error's poisoned data was created or consumed (HBM RAS); the "
        "driver resets the GPU and retires the page",
        "machine",
        f"{RESET}; `amd-smi bad-pages` lists the retired pages; {RMA}",
    ),
    AmdgpuFault(
        "aca_hardware_error",
        re.compile(r"\[Hardware Error\]: Accelerator Check Architecture events logged", re.I),
        "a hardware error record of the Accelerator Check Architecture (the GPU's MCA banks)",
        "machine",
        f"{RESET}; `amd-smi metric --ecc` and the 'aca entry' lines after it name the block; {RMA}",
    ),
    AmdgpuFault(
        "ring_reset_failed",
        re.compile(r"Ring \S+ reset failed", re.I),
        "the driver could not reset a hung ring and had to reset the whole GPU",
        "machine",
        f"{RESET}; {RMA}",
    ),
    AmdgpuFault(
        "reset_failed",
        re.compile(r"(?:GPU|MODE[12]) reset(?:\(\d+\))? failed", re.I),
        "a GPU reset failed: the GPU is unusable until the node reboots",
        "machine",
        f"drain the node and reboot it; {RMA}",
    ),
    AmdgpuFault(
        "ring_timeout",
        re.compile(r"ring \S+ timeout, signaled seq=", re.I),
        "a hardware ring stopped (a hang); the driver resets the GPU",
        "driver",
        f"{RESET}; if it recurs, update the driver/firmware or ask the provider",
    ),
    AmdgpuFault(
        "gpu_reset",
        re.compile(r"GPU reset begin!", re.I),
        "the driver reset the GPU (after a hang or a fatal error; a deliberate `amd-smi reset` "
        "logs it too: narrow the window with --xid-window to after it)",
        "driver",
        "find the fault logged just before it; if it recurs, ask the provider",
    ),
    AmdgpuFault(
        "mes_failed",
        re.compile(
            r"MES failed to respon(?:d|se)|MES might be in unrecoverable state|MES ring buffer is "
            r"full|failed to (?:remove|add|unmap|reset) (?:hardware |legacy )?queue|"
            r"kfd_queues_mes: Failed|reset via MES failed",
            re.I,
        ),
        "the GPU's scheduler firmware (MES) stopped answering; the driver resets the GPU",
        "driver",
        f"{RESET}; if it recurs, update the kernel, amdgpu firmware (MES) and ROCm, then ask the "
        "provider",
    ),
    AmdgpuFault(
        "vram_lost",
        re.compile(r"VRAM is lost due to GPU reset", re.I),
        "a GPU reset lost the GPU's memory: every job on that GPU died",
        "driver",
        "find the fault logged before the reset; if it recurs, ask the provider",
    ),
    AmdgpuFault(
        "device_wedged",
        re.compile(r"device wedged", re.I),
        "the driver declared the GPU wedged (hung), recovered only by a reset or not at all",
        "driver",
        f"{RESET}; find the fault logged before it; if it recurs, ask the provider",
    ),
    AmdgpuFault(
        "init_failed",
        re.compile(
            r"Fatal error during GPU init|amdgpu_device_ip_init failed|(?:sw|hw)_init of IP "
            r"block <\w+> failed|PSP (?:load \w+|firmware loading|create ring) failed|"
            r"probe (?:of \S+ |with driver amdgpu )failed with error",
            re.I,
        ),
        "the driver could not initialize the GPU (init, PSP firmware or probe failed): it is "
        "unusable",
        "machine",
        "reboot the node; if it persists, check the amdgpu firmware matches the kernel "
        f"(`dmesg | grep -i psp`), then {RMA.replace('if it recurs, ', '')}",
    ),
    AmdgpuFault(
        "mode_reset",
        re.compile(r"\bMODE[12] reset\b", re.I),
        "the driver reset the GPU (MODE1/MODE2) while it was in use",
        "driver",
        "find the fault logged just before it; if it recurs, ask the provider",
    ),
    AmdgpuFault(
        "illegal_command",
        re.compile(r"Illegal (?:opcode|instruction|register access) in command stream", re.I),
        "a program's command stream held an illegal instruction or register access",
        "application",
        "an application error: fix or restart the program; the machine is not at fault",
    ),
    AmdgpuFault(
        "soft_recovered",
        re.compile(r"ring \S+ timeout, but soft recovered", re.I),
        "one job hung and was killed; the GPU carried on",
        "application",
        "an application hang: fix or restart the program; the machine is not at fault",
    ),
    AmdgpuFault(
        "page_fault",
        re.compile(r"\] (?:(?:no-)?retry )?page fault \(src_id:", re.I),
        "a program touched an address it had not mapped (like NVIDIA's Xid 31)",
        "application",
        "an application error: fix or restart the program; the machine is not at fault",
    ),
)


def classify(text: str) -> AmdgpuFault | None:
    """The first catalogue entry the line matches (order: most specific first)."""
    return next((f for f in CATALOGUE if f.pattern.search(text)), None)


def judge(text: str, context: str | None = None) -> AmdgpuFault | None:
    """The entry for one event: a MODE1/MODE2 reset at boot or resume is bring-up, no fault."""
    kind = classify(text)
    if kind is None or kind.name != "mode_reset" or context not in ("boot", "resume"):
        return kind
    meaning = f"the driver reset the GPU while bringing it up ({context}), as it does"
    return AmdgpuFault(kind.name, kind.pattern, meaning, "informational", "none")


def parse_amdgpu(line: str) -> dict[str, Any] | None:
    """One amdgpu fault event from a line with amdgpu's PCI prefix, or None when it is not one."""
    match = PREFIX.search(line)
    if match is None or classify(match["text"]) is None:
        return None
    return _event(line, match["bus"].lower(), match["text"])


def explains(line: str) -> bool:
    """Whether a rule here reads the line (with or without amdgpu's PCI prefix)."""
    found = PREFIX.search(line) or UNPREFIXED.search(line)
    return found is not None and classify(found["text"]) is not None


def parse_amdgpu_lines(lines: list[str]) -> list[dict[str, Any]]:
    """Every amdgpu fault event in a log, unprefixed lines tied to their GPU where it can be."""
    buses = [_bus(line) for line in lines]
    everywhere = {b for b in buses if b}  # once: per unprefixed line it made a storm quadratic
    events = []
    for i, line in enumerate(lines):
        event = parse_amdgpu(line)
        unprefixed = UNPREFIXED.search(line) if event is None else None
        if unprefixed and classify(unprefixed["text"]):
            named = NAMED_BDF.search(unprefixed["text"])
            bus = named[0].lower() if named else _gpu_near(buses, i, everywhere)
            event = _event(line, bus, unprefixed["text"])
        if event is not None:
            context = (
                _context(lines, i, event) if classify(event["text"]).name == "mode_reset" else None
            )
            events.append({**event, "context": context} if context else event)
    return events


def _context(lines: list[str], i: int, event: dict[str, Any]) -> str | None:
    """ "resume" or "boot" when a reset is bring-up (no fault logged before it), else None."""
    before = lines[max(0, i - CONTEXT_LINES) : i]
    if any(FAULT_BEFORE.search(line) for line in before[-NEAR * 3 :]):
        return None
    if any(RESUME.search(line) for line in before):
        return "resume"
    return "boot" if event["t_s"] is not None and event["t_s"] < BOOT_S else None


def _event(line: str, bus: str | None, text: str) -> dict[str, Any]:
    return {"t_s": line_form.seconds(line), "bus_id": bus, "text": text.strip()[:300]}


def _bus(line: str) -> str | None:
    match = PREFIX.search(line)
    return match["bus"].lower() if match else None


def _gpu_near(buses: list[str | None], i: int, everywhere: set[str]) -> str | None:
    """The one GPU prefixed lines within NEAR lines name, else the log's only GPU (`everywhere`:
    every bus the log names), else None."""
    near = {b for b in buses[max(0, i - NEAR) : i + NEAR + 1] if b}
    if len(near) == 1:
        return near.pop()
    return next(iter(everywhere)) if len(everywhere) == 1 and not near else None
