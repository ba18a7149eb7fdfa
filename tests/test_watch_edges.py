"""disputatio watch at its edges: a client gone before its stream starts gives its feed back,
and the host guard refuses names that only look like ours. The viewer's application is driven
through ASGI in this process, the way uvicorn drives it, with the client's side scripted."""

from __future__ import annotations

import asyncio
import contextlib
import threading

import pytest

from disputatio.watch.server import build
from support.watching import add_turn, make_debate

PORT = 8470


def run(coro) -> None:
    """``asyncio.run`` in a thread of its own: an earlier test in this process (Playwright's
    synchronous API) may have left this thread marked as running a loop."""
    failed: list[BaseException] = []

    def main() -> None:
        try:
            asyncio.run(coro)
        except BaseException as exc:   # handed to the test's thread
            failed.append(exc)

    thread = threading.Thread(target=main)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]


def scope(path: str, host: bytes | None = b"127.0.0.1:8470", spec: str = "2.4") -> dict:
    headers = [(b"host", host)] if host is not None else []
    return {"type": "http", "asgi": {"version": "3.0", "spec_version": spec},
            "http_version": "1.1", "method": "GET", "scheme": "http", "path": path,
            "raw_path": path.encode(), "root_path": "", "query_string": b"",
            "headers": headers, "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", PORT)}


async def gone_at_once():
    return {"type": "http.disconnect"}


async def send_to_nobody(message):
    """A socket whose peer has gone: the first write fails, as uvicorn's does (ASGI 2.4)."""
    raise OSError("the client went")


async def send_never_done(message):
    """A write that never completes (ASGI before 2.4 cancels it when the client goes)."""
    await asyncio.Event().wait()


@pytest.mark.parametrize("spec, send", [("2.4", send_to_nobody), ("2.3", send_never_done)])
def test_a_client_gone_before_its_stream_starts_releases_the_feed(home, spec, send):
    debate = make_debate(home)
    add_turn(debate / "events.jsonl", "advocate", "Yes.")
    app, hub = build(home, PORT)

    async def visit():
        with pytest.raises(Exception) if spec == "2.4" else contextlib.nullcontext():
            await app(scope(f"/v1/debates/{debate.name}/stream", spec=spec), gone_at_once, send)

    for _ in range(3):
        run(visit())
    # nothing follows this debate any more: its events are dropped and nothing polls it
    assert hub.feeds == {}


@pytest.mark.parametrize("host", [b"127.0.0.1.evil.com:8470", b"localhost:8470.evil",
                                  b"127.0.0.1:8470.evil.com", b"[::1]:8470", b"localhost.:8470",
                                  b"127.0.0.1:08470", b"127.0.0.1:8470 ", None])
def test_names_that_only_look_like_ours_are_refused(home, host):
    debate = make_debate(home)
    app, _ = build(home, PORT)
    sent: list[dict] = []

    async def record(message):
        sent.append(message)

    run(app(scope(f"/v1/debates/{debate.name}", host=host), gone_at_once, record))
    assert sent[0]["status"] == 403
    assert b"Should we" not in b"".join(m.get("body", b"") for m in sent)
