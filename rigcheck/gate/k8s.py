"""Kubernetes' side of the gate: a run's verdict as node labels and annotations, and a
NoSchedule taint while the node fails, through the official kubernetes client.

`node_patch` is pure: the patch body for a node, from the run's verdict, its root-cause line and
the node's current taints (others' taints are kept; only rigcheck's own is added or removed).
Label and taint values allow no spaces or colons, so they carry the root-cause line's key; the
whole line goes in an annotation. `NodeMarker` reads and patches a node, by default as a
server-side dry run (dryRun=All: validated by the API server, nothing stored).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from rigcheck.errors import RigcheckError
from rigcheck.reports.root_cause import cause_key

PREFIX = "rigcheck.dev/"
TAINT_KEY = PREFIX + "unhealthy"
VERDICT, CAUSE, TIER, CHECKED = (
    PREFIX + k for k in ("verdict", "root-cause", "tier", "checked-at")
)
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")  # the API's rule
MAX_LABEL = 63


class KubernetesError(RigcheckError):
    """The cluster cannot be reached, or refused a read or a patch."""


def label_value(text: str) -> str:
    """`text` as a valid label (and taint) value: other characters become '_', at most 63."""
    value = re.sub(r"[^-A-Za-z0-9_.]", "_", text)[:MAX_LABEL]
    value = value.strip("-_.")
    return value if value and LABEL_VALUE.match(value) else "unknown"


def node_patch(
    verdict: str,
    root_cause: str | None,
    tier: str,
    taints: list[dict[str, Any]],
    now: dt.datetime,
    may_clear: bool = True,
) -> dict[str, Any]:
    """A strategic-merge patch for the node: labels and annotations merge (None deletes one);
    the taint list is replaced whole (the API merges no list of taints), keeping the others.

    may_clear False (a busy node's run, which judged less): its pass leaves rigcheck's taint,
    labels and root cause as the run that tainted the node wrote them and only stamps the
    time; only a full run (the idle Job, docs/k8s) clears a taint. Its failure taints."""
    stamp = now.astimezone(dt.timezone.utc).isoformat(timespec="seconds")
    tainted = any(t.get("key") == TAINT_KEY for t in taints)
    if root_cause is None and tainted and not may_clear:
        return {"metadata": {"annotations": {CHECKED: stamp}}}
    others = [t for t in taints if t.get("key") != TAINT_KEY]
    ours = []
    if root_cause is not None:
        ours = [{"key": TAINT_KEY, "value": label_value(cause_key(root_cause)),
                 "effect": "NoSchedule"}]  # fmt: skip
    return {
        "metadata": {
            "labels": {
                VERDICT: label_value(verdict),
                TIER: label_value(tier),
                CAUSE: None if root_cause is None else label_value(cause_key(root_cause)),
            },
            "annotations": {CAUSE: root_cause, CHECKED: stamp},
        },
        "spec": {"taints": others + ours},
    }


class NodeMarker:
    """Reads a node's taints and patches it through the kubernetes client's CoreV1Api."""

    def __init__(self, api: Any = None) -> None:
        self.api = api or _core_api()

    def taints(self, node: str) -> list[dict[str, Any]]:
        found = self._call(lambda: self.api.read_node(node), f"read node {node}")
        return [self._as_sent(t) for t in (found.spec.taints or [])]

    def _as_sent(self, taint: Any) -> dict[str, Any]:
        """A taint as the API spells it (timeAdded, not the model's time_added; no nulls), so
        the list sent back keeps every field of the taints rigcheck does not own."""
        from kubernetes.client import ApiClient

        client = getattr(self.api, "api_client", None) or ApiClient()
        return client.sanitize_for_serialization(taint)

    def patch(self, node: str, body: dict[str, Any], dry_run: bool) -> None:
        options = {"dry_run": "All"} if dry_run else {}
        self._call(lambda: self.api.patch_node(node, body, **options), f"patch node {node}")

    def _call(self, call, what: str):
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            return call()
        except ApiException as exc:
            hint = HINTS.get(exc.status, "")
            raise KubernetesError(f"{what}: {exc.status} {exc.reason}{hint}") from None
        except HTTPError as exc:  # refused, unreachable, TLS: the client's retries are spent
            host = getattr(getattr(self.api, "api_client", None), "configuration", None)
            where = f" at {host.host}" if host is not None else ""
            raise KubernetesError(
                f"{what}: the API server{where} did not answer ({type(exc).__name__}); "
                "check the kubeconfig's server, or the pod's network to the API"
            ) from None


# What to do about the answers a node patch gets most: one line each, for the pod's log.
HINTS = {
    403: " (its ServiceAccount needs get and patch on nodes: docs/k8s's ClusterRole)",
    404: " (no such node: --node, or $NODE_NAME from spec.nodeName, names the node)",
}


# YAML of the wrong shape (a server that is a number, a context that is a string, a list at the
# top): the client's loader fails inside with these, and a traceback exits 1, the code of a node
# marked failed, with nothing sent.
MISSHAPEN = (AttributeError, TypeError, KeyError)


def _core_api() -> Any:
    """In a pod: its ServiceAccount; elsewhere: ~/.kube/config (kubectl's context)."""
    try:
        import yaml  # the kubernetes client's own dependency
        from kubernetes import client, config
    except ImportError:
        raise KubernetesError(
            "the kubernetes client is not installed: pip install 'rigcheck[k8s]'"
        ) from None
    try:
        config.load_incluster_config()
    except config.ConfigException:
        try:
            config.load_kube_config()
        except (config.ConfigException, OSError, ValueError, yaml.YAMLError, *MISSHAPEN) as exc:
            # a kubeconfig that is no text (UnicodeDecodeError) or no YAML: was a traceback
            reason = " ".join(str(exc).split())[:200] or type(exc).__name__
            raise KubernetesError(f"no cluster to talk to: not in a pod, and {reason}") from None
    return client.CoreV1Api()
