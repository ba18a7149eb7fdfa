"""Each debate's ledger as the viewer serves it: read once, then followed as it grows. No
server library here: the feeds are plain asyncio (the listing is ``views``, as ``list`` has it).

Memory is bounded by the ledgers, not by the clients: each debate is read once into one
``Feed`` (its events, each already encoded as the server-sent-events frame every client gets),
and a client is only a cursor into it (the seq it has seen) plus the socket's send buffer. A slow
client falls behind and catches up; nothing is queued for it. One task polls the ledgers that
have clients (a ``stat`` each, ``POLL_S``), so a turn appended by another process reaches every
client within a fraction of a second. A ledger replaced whole (``disputatio redact`` rewrites it
by a rename) is read again; the ``turn_redacted`` event that follows tells clients what changed.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from disputatio import ledger, protocols, views
from disputatio.events import (
    EventError,
    TurnEnded,
    TurnFields,
    TurnInterrupted,
    TurnStarted,
    started_event,
    typed,
)
from disputatio.render.html import hue

POLL_S = 0.2


def debate_path(home: Path, debate_id: str) -> Path | None:
    """The ledger of the debate with this id, or None: an id is a folder name under
    ``.debate``, never a path (``..`` and slashes name nothing)."""
    if not debate_id.startswith("debate-") or "/" in debate_id or "\\" in debate_id:
        return None
    path = views.root(home) / debate_id / "events.jsonl"
    return path if path.is_file() else None


class Feed:
    """One debate's ledger, read once and then followed (see the module's docstring)."""

    def __init__(self, path: Path):
        self.path = path
        self.events: list[ledger.Event] = []
        self.frames: list[bytes] = []   # frames[i] is the SSE frame of seq i + 1
        self._offset = 0
        self._inode: tuple[int, int] | None = None
        self._grew = asyncio.Event()
        self.subscribers = 0

    def refresh(self) -> bool:
        """Read what was appended since the last call (everything, if the file was replaced);
        True if there is anything new. A line still being written waits for its newline."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        inode = (st.st_dev, st.st_ino)
        if inode != self._inode or st.st_size < self._offset:
            self._inode, self._offset = inode, 0
            self.events, self.frames = [], []
        if st.st_size == self._offset:
            return False
        with open(self.path, "rb") as fh:
            fh.seek(self._offset)
            chunk = fh.read(st.st_size - self._offset)
        end = chunk.rfind(b"\n") + 1
        self._offset += end
        fresh = [ev for ev in map(_event, chunk[:end].split(b"\n")) if ev is not None]
        before = len(self.events)
        for ev in fresh:
            if ev.seq == len(self.events) + 1:   # a gap or a repeat is not shown
                self.events.append(ev)
        titles = _titles(self.events)
        self.frames += [frame(ev, titles) for ev in self.events[before:]]
        if len(self.events) > before:
            self.wake()
            return True
        return False

    def wake(self) -> None:
        """Wake every client waiting in ``beyond``."""
        self._grew.set()
        self._grew = asyncio.Event()

    async def beyond(self, seen: int, timeout: float) -> bool:
        """Wait until the feed holds more than ``seen`` events (True) or ``timeout`` passes."""
        if len(self.events) > seen:
            return True
        grew = self._grew
        try:
            await asyncio.wait_for(grew.wait(), timeout)
        except TimeoutError:
            pass
        return len(self.events) > seen

    def payload(self, after: int, limit: int) -> list[dict[str, Any]]:
        """The events after seq ``after``, decoded from their frames: the API says exactly
        what the stream sends (titles and colours included)."""
        return [json.loads(f[f.index(b"data: ") + 6:]) for f in self.frames[after:after + limit]]


def _event(raw: bytes) -> ledger.Event | None:
    if not raw.strip():
        return None
    try:
        obj = json.loads(raw)
        ev = ledger.Event(obj["seq"], obj["ts"], obj["type"], obj["data"], obj["prev"],
                          obj["hash"])
    except (ValueError, KeyError, TypeError):
        return None
    return ev if isinstance(ev.seq, int) and isinstance(ev.data, dict) else None


def _titles(events: list[ledger.Event]) -> dict[str, str]:
    """Each turn's title as the debate's protocol gives it (its id where it cannot)."""
    try:
        started = started_event(events)
        protocol = protocols.get(started.protocol if started else "disputatio")
        title = protocol.presentation(protocol.state(events)).title
        out = {}
        for _, model in typed(events):
            if isinstance(model, TurnStarted):
                fields = model.model_dump(include=set(TurnFields.model_fields))
                out[model.turn_id] = title(TurnInterrupted(**fields, ok=False))
            elif isinstance(model, TurnEnded):
                out[model.turn_id] = title(model)
        return out
    except (EventError, KeyError, ValueError, TypeError, AttributeError):
        return {}


def frame(ev: ledger.Event, titles: dict[str, str]) -> bytes:
    """One server-sent event: its id is the seq (``Last-Event-ID`` resumes after it)."""
    body: dict[str, Any] = {"seq": ev.seq, "ts": ev.ts, "type": ev.type, "data": ev.data}
    turn_id, role = ev.data.get("turn_id"), ev.data.get("role")
    if isinstance(turn_id, str) and turn_id in titles:
        body["title"] = titles[turn_id]
    if isinstance(role, str):   # the participant's colour, as the HTML report has it
        body["hue"] = hue(role)
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    # JSON has no raw newline in it, so the frame is one data line
    return f"id: {ev.seq}\nevent: ledger\ndata: {data}\n\n".encode()


class Hub:
    """Every feed the viewer has opened, and the one task that follows those with clients."""

    def __init__(self, home: Path):
        self.home = home
        self.feeds: dict[str, Feed] = {}
        self.stopping = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    def bind(self) -> None:
        """Remember the loop the viewer runs on, so that ``stop_soon`` can reach it."""
        self._loop = asyncio.get_running_loop()

    def stop(self) -> None:
        """End every stream now (each wakes and sees ``stopping``) and the polling."""
        self.stopping.set()
        for feed in self.feeds.values():
            feed.wake()

    def stop_soon(self) -> None:
        """``stop`` from any thread or a signal handler."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.stop)

    def feed(self, debate_id: str) -> Feed | None:
        path = debate_path(self.home, debate_id)
        if path is None:
            return None
        feed = self.feeds.get(debate_id)
        if feed is None:
            feed = self.feeds[debate_id] = Feed(path)
        feed.refresh()
        return feed

    def release(self, debate_id: str) -> None:
        """Forget a feed no client follows: its events go with it."""
        feed = self.feeds.get(debate_id)
        if feed is not None and feed.subscribers <= 0:
            del self.feeds[debate_id]

    async def follow(self) -> None:
        """Poll the followed ledgers until the viewer stops."""
        while not self.stopping.is_set():
            for feed in list(self.feeds.values()):
                if feed.subscribers > 0:
                    feed.refresh()
            try:
                await asyncio.wait_for(self.stopping.wait(), POLL_S)
            except TimeoutError:
                pass
