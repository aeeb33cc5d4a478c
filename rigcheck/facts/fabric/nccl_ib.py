"""What NCCL over InfiniBand/RoCE will be given on this node: its IB settings (environment,
then $NCCL_CONF_FILE or ~/.nccl.conf, then /etc/nccl.conf, as NCCL reads them), the host's
network interfaces, and for each RoCE port its net device, MTU and GID table.

Read from /sys/class/net/<if>/{mtu,operstate} and, per RDMA port,
/sys/class/infiniband/<dev>/ports/<n>/gids/<i> with gid_attrs/types/<i> ("IB/RoCE v1",
"RoCE v2") and gid_attrs/ndevs/<i> (the net device the GID belongs to). Every read that fails
is an error record.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rigcheck.facts.fabric.nccl_env import nccl_environment
from rigcheck.facts.probe import guarded

ROOT = Path("/")
# The settings that decide how NCCL uses the RDMA fabric (NCCL docs, "Environment Variables").
IB_SETTINGS = (
    "NCCL_IB_DISABLE",
    "NCCL_IB_HCA",
    "NCCL_SOCKET_IFNAME",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_IB_GID_INDEX",
    "NCCL_IB_ROCE_VERSION_NUM",
    "NCCL_IB_TC",
    "NCCL_TOPO_FILE",
    "NCCL_NET",
)
ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"


def probe_nccl_ib(
    root: Path = ROOT, environ: Mapping[str, str] | None = None, home: Path | None = None
) -> dict[str, Any]:
    """The nccl_ib part of the fabric section; never raises."""
    environ = os.environ if environ is None else environ
    return {
        "settings": guarded(lambda: effective_settings(environ, home or Path.home())),
        "interfaces": guarded(lambda: interfaces(root)),
    }


def effective_settings(environ: Mapping[str, str], home: Path) -> dict[str, Any]:
    """{setting: value or None}, the environment first, then the config files."""
    found = nccl_environment(environ, home)
    sources = [found["env"], *(f for f in found["conf_files"].values() if "error" not in f)]
    return {key: next((s[key] for s in sources if key in s), None) for key in IB_SETTINGS}


def interfaces(root: Path) -> dict[str, Any]:
    """{name: {"mtu": int, "operstate": str}} of every network interface."""
    net = root / "sys/class/net"
    return {
        p.name: {
            "mtu": guarded(lambda p=p: int((p / "mtu").read_text())),
            "operstate": guarded(lambda p=p: (p / "operstate").read_text().strip()),
        }
        for p in sorted(net.iterdir())
    }


def roce_gids(port: Path) -> list[dict[str, Any]]:
    """The port's non-zero GIDs with their type and net device (RoCE ports only have types)."""
    gids = []
    table, attrs = port / "gids", port / "gid_attrs"
    for entry in sorted(table.iterdir(), key=lambda p: int(p.name)) if table.is_dir() else []:
        gid = guarded(lambda e=entry: e.read_text().strip())
        if gid == ZERO_GID:
            continue
        gids.append(
            {
                "index": int(entry.name),
                "gid": gid,
                "type": guarded(lambda e=entry: (attrs / "types" / e.name).read_text().strip()),
                "netdev": guarded(lambda e=entry: (attrs / "ndevs" / e.name).read_text().strip()),
            }
        )
    return gids
