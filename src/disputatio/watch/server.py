"""The viewer's HTTP face (Starlette): the page, the read-only API and the event streams.

Everything is a GET but, with ``--human``, the human in the loop's answer (``watch.human``),
behind the same host guard and its own origin and token checks. The guard answers 403 to any
request whose ``Host`` is not the loopback name and the bound port: a page on another site that
rebinds its own name to 127.0.0.1 (DNS rebinding) sends its own name, and is refused before any
route runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from dataclasses import asdict
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from disputatio import views
from disputatio.debates import entry
from disputatio.events import EventError
from disputatio.render import summary
from disputatio.watch import feed as feeds
from disputatio.watch import page
from disputatio.watch.human import routes as human_routes

KEEPALIVE_S = 15.0
PAGE_LIMIT = 1000        # events per /events answer; "next" says where to go on
BATCH = 200              # frames written to a stream at once
SECURITY = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store", "X-Frame-Options": "DENY"}


class HostGuard:
    """Refuse any request whose Host header is not ours (see the module's docstring)."""

    def __init__(self, app: ASGIApp, port: int):
        self.app = app
        self.allowed = {f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            hosts = [v.lower() for k, v in scope["headers"] if k == b"host"]
            if len(hosts) != 1 or hosts[0] not in self.allowed:
                await _text(403, "error: this viewer answers only to 127.0.0.1 and localhost "
                            "on its own port\n")(scope, receive, send)
                return
        await self.app(scope, receive, send)


def build(home: Path, port: int, human: bool = False) -> tuple[ASGIApp, feeds.Hub]:
    """The viewer of the debates under ``home/.debate``, answering on ``port``; with ``human``
    it also answers their open questions (a fresh token per run, carried by the page)."""
    hub = feeds.Hub(home)
    token = secrets.token_urlsafe(32) if human else None
    shown = page.html(token)

    async def index(request: Request) -> Response:
        return HTMLResponse(shown, headers={**SECURITY, "Content-Security-Policy": page.CSP})

    async def debates(request: Request) -> Response:
        listed, _ = await asyncio.to_thread(views.listing, home, True)
        return _json({"debates": [asdict(e) for e in listed]})

    async def debate(request: Request) -> Response:
        debate_id = request.path_params["debate"]
        feed = hub.feed(debate_id)
        if feed is None:
            return _missing(debate_id)
        try:
            found = asdict(entry(feed.path.parent))
            turns = [_turn(v) for v in summary.turns(feed.events)]
        except EventError as exc:
            return _json({"error": f"{debate_id}: {exc}"}, 422)
        finally:
            hub.release(debate_id)
        return _json({**found, "events": len(feed.events), "turns": turns})

    async def events(request: Request) -> Response:
        debate_id = request.path_params["debate"]
        after = _seq(request.query_params.get("after", "0"))
        if after is None:
            return _json({"error": "after must be a seq: a whole number, 0 or more"}, 400)
        feed = hub.feed(debate_id)
        if feed is None:
            return _missing(debate_id)
        try:
            got = feed.payload(after, PAGE_LIMIT)
            more = len(feed.events) > after + len(got)
        finally:
            hub.release(debate_id)
        return _json({"events": got, "next": got[-1]["seq"] if more else None})

    async def stream(request: Request) -> Response:
        debate_id = request.path_params["debate"]
        # an EventSource that reconnects sends the last id it saw; a first visit may ask
        after = _seq(request.headers.get("last-event-id")
                     or request.query_params.get("after", "0"))
        if after is None:
            return _json({"error": "Last-Event-ID and after must be a seq"}, 400)
        feed = hub.feed(debate_id)
        if feed is None:
            return _missing(debate_id)
        feed.subscribers += 1
        return _Stream(_frames(hub, feed, after), lambda: _unsubscribe(hub, debate_id, feed))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        hub.bind()
        task = asyncio.create_task(hub.follow())
        try:
            yield
        finally:
            hub.stop()
            await task

    app = Starlette(routes=[
        Route("/", index, methods=["GET"]),
        Route("/debates/{debate}", index, methods=["GET"]),
        Route("/v1/debates", debates, methods=["GET"]),
        Route("/v1/debates/{debate}", debate, methods=["GET"]),
        Route("/v1/debates/{debate}/events", events, methods=["GET"]),
        Route("/v1/debates/{debate}/stream", stream, methods=["GET"]),
        *(human_routes(home, port, token, _json) if token else []),
    ], lifespan=lifespan)
    return HostGuard(app, port), hub


class _Stream(StreamingResponse):
    """An event stream that gives its feed back however it ends. The release cannot live in the
    body's generator: a client that goes before the first byte is sent leaves that generator
    unstarted, and an unstarted generator never runs its ``finally``."""

    def __init__(self, body, done) -> None:
        super().__init__(body, media_type="text/event-stream", headers=SECURITY)
        self._done = done

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._done()


def _unsubscribe(hub: feeds.Hub, debate_id: str, feed: feeds.Feed) -> None:
    feed.subscribers -= 1
    hub.release(debate_id)


async def _frames(hub: feeds.Hub, feed: feeds.Feed, seen: int):
    """A client's stream: every event after ``seen``, once, in order, then each new one as the
    feed reads it; a comment now and then keeps proxies from closing an idle stream."""
    yield b"retry: 1000\n\n"
    while not hub.stopping.is_set():
        if len(feed.frames) > seen:
            chunk = feed.frames[seen:seen + BATCH]
            seen += len(chunk)
            yield b"".join(chunk)
        elif not await feed.beyond(seen, KEEPALIVE_S) and not hub.stopping.is_set():
            yield b": keep-alive\n\n"


def _turn(view: summary.TurnView) -> dict[str, Any]:
    t = view.turn
    return {"turn_id": t.turn_id, "participant": t.participant, "seat": t.seat,
            "phase": t.phase, "round": t.round, "adapter": t.adapter, "ok": view.ok,
            "text": t.text, "failure": t.failure, "message": t.message,
            "cost_usd": t.cost_usd, "duration_s": t.duration_s}


def _seq(value: str | None) -> int | None:
    try:
        n = int(value or "0")
    except ValueError:
        return None
    return n if n >= 0 else None


def _json(body: dict[str, Any], status: int = 200) -> Response:
    return Response(json.dumps(body, ensure_ascii=False), status, headers=SECURITY,
                    media_type="application/json")


def _missing(debate_id: str) -> Response:
    return _json({"error": f"no debate {debate_id!r}"}, 404)


def _text(status: int, text: str) -> Response:
    return Response(text, status, media_type="text/plain", headers=SECURITY)

