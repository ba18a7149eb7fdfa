"""For the tests of ``disputatio watch``: debates written through the real ledger, the viewer
served in this process on an ephemeral port, and plain HTTP and server-sent-events clients
(the standard library's, so the server is tested by a client it does not share code with)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from disputatio import ledger
from disputatio.events import DebateStarted, TurnCompleted, TurnStarted


def make_debate(home: Path, stamp: str = "20261201T100000Z",
                participants: tuple[str, ...] = ("advocate", "skeptic"),
                quaestio: str = "Should we?") -> Path:
    """A debate folder under ``home/.debate`` whose ledger has begun."""
    debate = home / ".debate" / f"debate-{stamp}"
    debate.mkdir(parents=True)
    ledger.Ledger(debate / "events.jsonl").append(DebateStarted.TYPE, DebateStarted(
        quaestio=quaestio, rounds=0, participants=list(participants)).to_data())
    return debate


def add_turn(events: Path, name: str, text: str, led: ledger.Ledger | None = None) -> int:
    """A proposal by ``name``, started and answered; the seq of its answer."""
    led = led or ledger.Ledger(events)
    fields = {"turn_id": f"proposal/{name}", "role": name, "seat": "participant",
              "phase": "proposal", "round": 0, "adapter": "simulated"}
    led.append(TurnStarted.TYPE, TurnStarted(**fields).to_data())
    return led.append(TurnCompleted.TYPE, TurnCompleted(**fields, ok=True, text=text,
                                                        duration_s=0.1).to_data()).seq


# another process appending turns, as a running debate does: "<events> <name> <text> [delay]"
APPENDER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from support.watching import add_turn
from disputatio import ledger
events, count, delay = Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
pad = "x" * int(sys.argv[5])
led = ledger.Ledger(events)
for n in range(count):
    add_turn(events, f"late{n}", f"answer {n} from another process{pad}", led)
    time.sleep(delay)
"""


def append_elsewhere(events: Path, count: int, delay: float = 0.0,
                     pad: int = 0) -> subprocess.Popen:
    """Another process appending ``count`` turns (``pad`` more characters of text each)."""
    tests = Path(__file__).resolve().parents[1]
    return subprocess.Popen([sys.executable, "-c", APPENDER, str(tests), str(events),
                             str(count), str(delay), str(pad)])


@contextmanager
def viewer(home: Path, own_threads: bool = True,
           human: bool = False) -> Iterator[tuple[str, object]]:
    """``(base url, server)``: the viewer of ``home`` served in a thread until the block
    ends; that thread, and any the server started, are gone afterwards (asserted; with
    ``own_threads`` False only the server's, for a test whose browser starts threads too)."""
    from disputatio import watch

    before = set(threading.enumerate())
    sock = watch.bind(0)
    server = watch.make_server(home, sock, human)
    thread = threading.Thread(target=server.run_on, args=(sock,), name="viewer")
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.started, "the viewer did not start"
    try:
        yield watch.url_of(sock), server
    finally:
        server.stop()
        thread.join(10)
        sock.close()
        assert not thread.is_alive(), "the viewer did not stop"
        left = set(threading.enumerate()) - before
        assert not (left if own_threads else [t for t in left if t is thread]), \
            f"the viewer left threads behind: {left}"


@dataclass
class Got:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


def get(url: str, path: str, host: str | None = None, method: str = "GET",
        headers: dict[str, str] | None = None) -> Got:
    hostname, port = url.split("//")[1].rstrip("/").split(":")
    conn = http.client.HTTPConnection(hostname, int(port), timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True)
        conn.putheader("Host", f"{hostname}:{port}" if host is None else host)
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        conn.endheaders()
        r = conn.getresponse()
        return Got(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


class Stream:
    """A server-sent-events client: ``events()`` yields ``(id, type, data)`` as they come."""

    def __init__(self, url: str, path: str, last_id: int | None = None, timeout: float = 10):
        hostname, port = url.split("//")[1].rstrip("/").split(":")
        self.conn = http.client.HTTPConnection(hostname, int(port), timeout=timeout)
        headers = {"Accept": "text/event-stream"}
        if last_id is not None:
            headers["Last-Event-ID"] = str(last_id)
        self.conn.request("GET", path, headers=headers)
        self.response = self.conn.getresponse()
        assert self.response.status == 200, self.response.status
        assert self.response.getheader("content-type", "").startswith("text/event-stream")

    def events(self) -> Iterator[tuple[int, str, dict]]:
        ident, kind, data = None, "message", []
        while True:
            raw = self.response.readline()
            if not raw:
                return
            line = raw.decode().rstrip("\n")
            if not line:
                if data:
                    yield int(ident) if ident else 0, kind, json.loads("\n".join(data))
                ident, kind, data = None, "message", []
            elif line.startswith("id: "):
                ident = line[4:]
            elif line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])

    def seqs_until(self, last: int) -> list[int]:
        """Every seq received until ``last`` arrives."""
        seen = []
        for seq, _, _ in self.events():
            seen.append(seq)
            if seq >= last:
                break
        return seen

    def close(self) -> None:
        self.conn.close()
