"""The test suite's own GitHub REST API, on 127.0.0.1: issue comments of pull requests (list with
pages, create, update), a token it insists on, and failures scripted ahead (a rate limit, a
5xx) — so the client and the action's steps are tested without the network."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

TOKEN = "test-token"
_LIST = re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$")
_ONE = re.compile(r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$")


@dataclass
class FakeGitHub:
    url: str = ""
    comments: dict[tuple[str, int], list[dict]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    # answers given before any real one: (status, headers, message)
    failures: list[tuple[int, dict[str, str], str]] = field(default_factory=list)
    next_id: int = 1000

    def add(self, repo: str, pr: int, body: str, author: str = "github-actions[bot]") -> dict:
        self.next_id += 1
        c = {"id": self.next_id, "body": body, "user": {"login": author}}
        self.comments.setdefault((repo, pr), []).append(c)
        return c


def _handler(state: FakeGitHub, lock: threading.Lock):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:   # quiet
            pass

        def _send(self, status: int, data, headers: dict[str, str] | None = None) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(raw)

        def _serve(self, method: str) -> None:
            url = urlparse(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            payload = json.loads(self.rfile.read(length)) if length else None
            with lock:
                state.requests.append((method, self.path))
                if state.failures:
                    status, headers, message = state.failures.pop(0)
                    return self._send(status, {"message": message}, headers)
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    return self._send(401, {"message": "Bad credentials"})
                if m := _LIST.match(url.path):
                    key = (m.group(1), int(m.group(2)))
                    if method == "GET":
                        q = parse_qs(url.query)
                        per = int(q.get("per_page", ["30"])[0])
                        page = int(q.get("page", ["1"])[0])
                        items = state.comments.get(key, [])
                        return self._send(200, items[(page - 1) * per: page * per])
                    if method == "POST":
                        return self._send(201, state.add(*key, payload["body"]))
                if (m := _ONE.match(url.path)) and method == "PATCH":
                    for items in state.comments.values():
                        for c in items:
                            if c["id"] == int(m.group(2)):
                                c["body"] = payload["body"]
                                return self._send(200, c)
                return self._send(404, {"message": "Not Found"})

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

    return Handler


@contextmanager
def fake_github() -> Iterator[FakeGitHub]:
    """A running fake API; its ``url`` is what GITHUB_API_URL should be."""
    state = FakeGitHub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state, threading.Lock()))
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
