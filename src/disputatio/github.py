"""A small client of the GitHub REST API: the pull-request comment a review keeps up to date.

Only what posting one comment needs — list a pull request's comments, create one, update one —
over the standard library's ``urllib``, with GitHub's documented back-off: a 403 or 429 that
carries ``retry-after`` (a secondary rate limit) or ``x-ratelimit-remaining: 0`` (the primary
one, until ``x-ratelimit-reset``) is waited out when the wait is short enough, else reported; a
5xx or a dropped connection is tried again with a growing pause. The API's root comes from
``GITHUB_API_URL`` (GitHub Enterprise, and the test suite's own server on 127.0.0.1).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

API = "https://api.github.com"
PAGE = 100


class GitHubError(Exception):
    """A request that failed for good: one line saying which and why."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Comment:
    id: int
    body: str
    author: str


@dataclass
class Client:
    """``repo`` is ``owner/name``. ``sleep`` and ``clock`` are the waiting and the time the
    back-off uses (the tests pass their own: no test waits for real)."""

    token: str
    repo: str
    api: str = API
    attempts: int = 4
    max_wait: float = 120.0       # a longer rate-limit wait is reported, not waited out
    timeout: float = 30.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    waited: list[float] = field(default_factory=list)

    # --- the comment -----------------------------------------------------------------------

    def comments(self, pr: int) -> list[Comment]:
        """Every comment on the pull request (issue comments), oldest first."""
        out: list[Comment] = []
        page = 1
        while True:
            batch = self.request("GET", f"/repos/{self.repo}/issues/{pr}/comments"
                                 f"?per_page={PAGE}&page={page}")
            if not isinstance(batch, list):
                raise GitHubError("listing comments: the API did not answer with a list")
            out += [Comment(int(c["id"]), c.get("body") or "",
                            (c.get("user") or {}).get("login") or "") for c in batch]
            if len(batch) < PAGE:
                return out
            page += 1

    def find(self, pr: int, marker: str, author: str | None = None) -> Comment | None:
        """The newest comment holding ``marker`` (by ``author``, when given: anyone can write
        a marker into a comment of their own)."""
        found = [c for c in self.comments(pr) if marker in c.body
                 and (author is None or c.author == author)]
        return found[-1] if found else None

    def create(self, pr: int, body: str) -> Comment:
        c = self.request("POST", f"/repos/{self.repo}/issues/{pr}/comments", {"body": body})
        return Comment(int(c["id"]), c.get("body") or body, (c.get("user") or {}).get("login", ""))

    def update(self, comment_id: int, body: str) -> Comment:
        c = self.request("PATCH", f"/repos/{self.repo}/issues/comments/{comment_id}",
                         {"body": body})
        return Comment(int(c["id"]), c.get("body") or body, (c.get("user") or {}).get("login", ""))

    def upsert(self, pr: int, marker: str, body: str,
               author: str | None = None) -> tuple[str, Comment]:
        """Update the comment holding ``marker``, or create it: ("updated" | "created", it)."""
        old = self.find(pr, marker, author)
        if old is not None:
            return "updated", self.update(old.id, body)
        return "created", self.create(pr, body)

    # --- one request, with GitHub's back-off -----------------------------------------------

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        pause = 1.0
        for attempt in range(1, self.attempts + 1):
            req = urllib.request.Request(self.api.rstrip("/") + path, data=data, method=method,
                                         headers=self._headers(data is not None))
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as res:
                    raw = res.read()
                    return json.loads(raw) if raw.strip() else None
            except urllib.error.HTTPError as exc:
                wait = self._rate_limit_wait(exc)
                what = f"{method} {path.split('?')[0]}: {exc.code} {_message(exc)}"
                if wait is not None:
                    if wait > self.max_wait:
                        raise GitHubError(f"{what} (rate limited for {wait:.0f} s more)",
                                          exc.code) from None
                elif exc.code >= 500:
                    wait, pause = pause, pause * 2
                else:
                    raise GitHubError(what, exc.code) from None
            except (urllib.error.URLError, OSError) as exc:
                what = f"{method} {path.split('?')[0]}: {getattr(exc, 'reason', exc)}"
                wait, pause = pause, pause * 2
            if attempt == self.attempts:
                raise GitHubError(f"{what} (gave up after {self.attempts} attempts)")
            self.waited.append(wait)
            self.sleep(wait)
        raise AssertionError("unreachable")

    def _headers(self, has_body: bool) -> dict[str, str]:
        h = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
             "User-Agent": "disputatio", "Authorization": f"Bearer {self.token}"}
        if has_body:
            h["Content-Type"] = "application/json"
        return h

    def _rate_limit_wait(self, exc: urllib.error.HTTPError) -> float | None:
        """Seconds to wait before trying again, when the answer is a rate limit."""
        if exc.code not in (403, 429):
            return None
        after = exc.headers.get("retry-after")
        if after is not None:
            try:
                return max(0.0, float(after))
            except ValueError:
                return 60.0
        if exc.headers.get("x-ratelimit-remaining") == "0":
            try:
                return max(0.0, float(exc.headers.get("x-ratelimit-reset", "")) - self.clock())
            except ValueError:
                return 60.0
        return 60.0 if exc.code == 429 else None   # a plain 403 is a permission: no retry


def _message(exc: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(exc.read()).get("message") or exc.reason)[:300]
    except (ValueError, AttributeError, OSError):
        return str(exc.reason)[:300]
