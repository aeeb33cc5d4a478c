"""A stand-in for the Kubernetes API server's node endpoints, on a local port, for the REAL
kubernetes Python client: only what is below the client is simulated. It answers as the API
server does (Kubernetes API reference, "Node v1 core": read and patch; Status objects for
errors, as `kubectl get --raw` shows them): GET and PATCH /api/v1/nodes/{name}, 404 with a
NotFound Status for an unknown node, 403 with a Forbidden Status when told to refuse, and
it records every request (method, path, query, Content-Type, body) for the tests to read.
The Status texts are written by hand after the API server's wording."""

from __future__ import annotations

import copy
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PREFIX = "/api/v1/nodes/"
USER = "system:serviceaccount:kube-system:rigcheck-health"


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    content_type: str | None
    body: Any


@dataclass
class FakeApiServer:
    nodes: dict[str, dict[str, Any]]
    refuse: set[str] = field(default_factory=set)  # verbs answered 403 ("get", "patch")
    seen: list[Seen] = field(default_factory=list)

    def __enter__(self) -> FakeApiServer:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, seen: Seen) -> tuple[int, dict[str, Any]]:
        self.seen.append(seen)
        name = seen.path[len(PREFIX) :] if seen.path.startswith(PREFIX) else ""
        verb = {"GET": "get", "PATCH": "patch"}.get(seen.method)
        if verb is None or not name:
            return 405, status(405, "MethodNotAllowed", "the server does not allow this method")
        if verb in self.refuse:
            return 403, status(403, "Forbidden", f'nodes "{name}" is forbidden: User "{USER}" '
                               f'cannot {verb} resource "nodes" in API group "" at the cluster '
                               "scope")  # fmt: skip
        if name not in self.nodes:
            return 404, status(404, "NotFound", f'nodes "{name}" not found', name)
        node = self.nodes[name]
        if verb == "get":
            return 200, node
        patched = merge(node, seen.body)
        if seen.query.get("dryRun") != ["All"]:
            self.nodes[name] = patched
        return 200, patched


def status(code: int, reason: str, message: str, name: str | None = None) -> dict[str, Any]:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}  # fmt: skip
    if name:
        body["details"] = {"name": name, "kind": "nodes"}
    return body


def merge(node: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """The strategic merge of rigcheck's patch shape: maps merge, null deletes, the taint list
    (no patch merge key in the Node API) is replaced whole."""
    out = copy.deepcopy(node)
    for part, values in patch.items():
        if part == "spec":
            out.setdefault("spec", {}).update(values)
            continue
        for key, entries in values.items():
            target = out.setdefault(part, {}).setdefault(key, {})
            for name, value in entries.items():
                if value is None:
                    target.pop(name, None)
                else:
                    target[name] = value
    return out


def node(name: str, taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"kind": "Node", "apiVersion": "v1",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": taints or []}}  # fmt: skip


def _handler(api: FakeApiServer):
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            split = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            seen = Seen(self.command, split.path, parse_qs(split.query),
                        self.headers.get("Content-Type"),
                        json.loads(raw) if raw else None)  # fmt: skip
            code, body = api.answer(seen)
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PATCH = do_POST = do_PUT = do_DELETE = _serve

        def log_message(self, *args: object) -> None:  # quiet: pytest shows what matters
            pass

    return Handler
