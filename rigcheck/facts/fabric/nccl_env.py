"""What shapes NCCL on this host: its environment, its config files, and what its log says.

NCCL reads NCCL_* from the environment, then from $NCCL_CONF_FILE (or ~/.nccl.conf), then from
/etc/nccl.conf; the environment wins, then the user file (NCCL docs, "Environment Variables").
All of it is recorded with the result, because the same GPUs give different bandwidth under
NCCL_ALGO=Ring, NCCL_P2P_DISABLE=1 or NCCL_NVLS_ENABLE=0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# The settings this suite names in its messages; every NCCL_* present is recorded anyway.
NOTABLE = (
    "NCCL_P2P_DISABLE",
    "NCCL_P2P_LEVEL",
    "NCCL_SHM_DISABLE",
    "NCCL_IB_DISABLE",
    "NCCL_SOCKET_IFNAME",
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_BUFFSIZE",
    "NCCL_NVLS_ENABLE",
    "NCCL_MIN_NCHANNELS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_CUMEM_ENABLE",
    "NCCL_TOPO_FILE",
    "NCCL_DEBUG",
)
PREFIXES = ("NCCL_", "TORCH_NCCL_", "RCCL_", "GLOO_")
LOG_VERSION = re.compile(r"NCCL version (\S+)")
LOG_NVLS = re.compile(r"NVLS multicast support is (not )?available")
LOG_NVLS_CHANNELS = re.compile(r"(\d+) nvls channels")


def conf_files(environ: Mapping[str, str], home: Path) -> list[Path]:
    """The files NCCL reads, strongest first."""
    user = environ.get("NCCL_CONF_FILE") or str(home / ".nccl.conf")
    return [Path(user), Path("/etc/nccl.conf")]


def read_conf(path: Path) -> dict[str, str]:
    """KEY=VALUE lines of an nccl.conf; comments and blank lines skipped."""
    settings = {}
    for line in path.read_text().splitlines():
        key, sep, value = line.split("#", 1)[0].strip().partition("=")
        if sep and key:
            settings[key.strip()] = value.strip()
    return settings


def nccl_environment(environ: Mapping[str, str], home: Path) -> dict[str, Any]:
    """The NCCL-related environment, the config files, and the effective notable settings."""
    env = {k: v for k, v in sorted(environ.items()) if k.startswith(PREFIXES)}
    files = {}
    for path in conf_files(environ, home):
        try:
            files[str(path)] = read_conf(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            files[str(path)] = {"error": f"{type(exc).__name__}: {exc}"}
    effective = {}
    for key in NOTABLE:
        sources = [env, *(f for f in files.values() if "error" not in f)]
        effective[key] = next((s[key] for s in sources if key in s), None)
    return {"env": env, "conf_files": files, "effective": effective}


def parse_nccl_log(text: str) -> dict[str, Any]:
    """What NCCL's INFO lines say: the library version loaded, NVLS availability and channels."""
    version = LOG_VERSION.search(text)
    nvls = [m.group(1) is None for m in LOG_NVLS.finditer(text)]
    channels = [int(m.group(1)) for m in LOG_NVLS_CHANNELS.finditer(text)]
    return {
        "version": version.group(1) if version else None,
        "nvls_available": all(nvls) if nvls else None,
        "nvls_channels": min(channels) if channels else None,
    }


def algo_allows_nvls(value: str | None) -> bool:
    """Does NCCL_ALGO leave NVLS (or NVLSTree) available to all-reduce?

    Forms: "Ring", "Tree,Ring", "^NVLS" (exclude), and since NCCL 2.24 per collective:
    "allreduce:tree,ring;allgather:ring".
    """
    if not value:
        return True
    if ":" in value:
        parts = dict(p.split(":", 1) for p in value.split(";") if ":" in p)
        value = next((v for k, v in parts.items() if k.strip().lower() == "allreduce"), "")
        if not value:
            return True
    names = value.strip()
    exclude = names.startswith("^")
    listed = {n.strip().lower() for n in names.lstrip("^").split(",")}
    nvls = bool(listed & {"nvls", "nvlstree"})
    return not nvls if exclude else nvls


def nvls_state(backend: str, effective: Mapping[str, Any], log: Mapping[str, Any] | None):
    """(used: True/False/None, why): whether the all-reduce could have used NVLink SHARP."""
    if backend != "nccl":
        return False, f"{backend} has no NVLS"
    if str(effective.get("NCCL_NVLS_ENABLE")) == "0":
        return False, "NCCL_NVLS_ENABLE=0 turns NVLS off"
    if not algo_allows_nvls(effective.get("NCCL_ALGO")):
        return False, f"NCCL_ALGO={effective['NCCL_ALGO']} leaves NVLS out"
    if not log or log.get("nvls_available") is None:
        return None, (
            "unknown: NCCL's INFO log was not captured (NCCL_DEBUG is set to "
            f"{effective.get('NCCL_DEBUG')!r} by the environment)"
        )
    if not log["nvls_available"]:
        return False, "NCCL: NVLS multicast support is not available on this node"
    if log.get("nvls_channels") == 0:
        return False, "NCCL set up 0 NVLS channels"
    channels = log.get("nvls_channels")
    count = f"{channels} NVLS channels" if channels else "NVLS"
    return True, f"NCCL set up {count}; it uses NVLS for large all-reduce where available"


RING_FIGURE = "allreduce_ring_busbw_gbps"


def nvls_unavailable_on_node(log: Mapping[str, Any] | None) -> bool:
    """NCCL itself found no NVLS on this node: no multicast support (a VM without it, a
    fabric manager that does not enable it) or 0 NVLS channels. Then ring all-reduce is the
    healthy figure. NVLS switched off by NCCL_NVLS_ENABLE or NCCL_ALGO is not this: that is a
    setting, and the NVLS figure still judges it."""
    if not isinstance(log, Mapping):
        return False
    return log.get("nvls_available") is False or log.get("nvls_channels") == 0


def allreduce_figure(backend: str, nccl: Mapping[str, Any] | None, figures: Mapping[str, Any]):
    """(the spec figure that judges this all-reduce, why that one)."""
    if backend != "nccl" or RING_FIGURE not in figures or not isinstance(nccl, Mapping):
        return "allreduce_busbw_gbps", ""
    effective = nccl.get("effective") if isinstance(nccl.get("effective"), Mapping) else {}
    by_setting = str(effective.get("NCCL_NVLS_ENABLE")) == "0" or not algo_allows_nvls(
        effective.get("NCCL_ALGO")
    )
    if not by_setting and nvls_unavailable_on_node(nccl.get("log")):
        return RING_FIGURE, "NCCL reports NVLS unavailable on this node: judged as ring all-reduce"
    return "allreduce_busbw_gbps", ""


def socket_ifname_matches(value: str, interfaces: list[str]) -> list[str]:
    """The interfaces NCCL_SOCKET_IFNAME selects, by NCCL's rules.

    A comma-separated list of prefixes; "^" in front excludes them instead; "=" in front
    (after any "^") asks for exact names. lo is only chosen when named.
    """
    exclude = value.startswith("^")
    rest = value[1:] if exclude else value
    exact = rest.startswith("=")
    names = [n for n in (rest[1:] if exact else rest).split(",") if n]

    def listed(iface: str) -> bool:
        return any(iface == n if exact else iface.startswith(n) for n in names)

    if exclude:
        return [i for i in interfaces if not listed(i) and i != "lo"]
    return [i for i in interfaces if listed(i)]
