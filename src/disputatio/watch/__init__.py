"""``disputatio watch``: a live viewer of the debates, served on the loopback interface.

Starlette and uvicorn do the HTTP: a well-kept ASGI toolkit and server, small (they bring
anyio, h11 and click, nothing compiled), with streaming responses that end when the client goes.
They are imported only here, when ``watch`` runs, so ``disputatio --help`` does not load them.

The viewer binds 127.0.0.1 (never another interface) and refuses requests that name another host
(``server.HostGuard``); with ``--human`` its one write route checks more (``watch.human``).
Ctrl-C or SIGTERM stops it cleanly: every stream ends, the polling task ends, the socket closes,
and the command exits 0; no thread or process is started besides the browser ``webbrowser`` may
open.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
import threading
import webbrowser
from pathlib import Path

from disputatio.outcome import EXIT_OK, Outcome, UsageError

HOST = "127.0.0.1"


def bind(port: int) -> socket.socket:
    """A listening socket on the loopback interface (port 0: any free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}; choose "
                         "another port with --port (0: any free one)") from None
    sock.set_inheritable(False)
    return sock


def url_of(sock: socket.socket) -> str:
    return f"http://{HOST}:{sock.getsockname()[1]}/"


def make_server(home: Path, sock: socket.socket, human: bool = False):
    """The uvicorn server of the viewer on ``sock``; ``run`` serves until ``stop``."""
    import uvicorn

    from disputatio.watch.server import build

    class Server(uvicorn.Server):
        """uvicorn's server, stopped by our signal handlers (which end the event streams
        first: uvicorn waits for open responses to finish before it exits)."""

        @contextlib.contextmanager
        def capture_signals(self):
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            old = {s: signal.signal(s, lambda *_: self.stop()) for s in
                   (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for s, handler in old.items():
                    signal.signal(s, handler)

        def stop(self) -> None:
            """From any thread or a signal handler; a second call stops at once."""
            if self.should_exit:
                self.force_exit = True
            self.should_exit = True
            hub.stop_soon()

        def run_on(self, sock: socket.socket) -> None:
            self.run(sockets=[sock])

    app, hub = build(home, sock.getsockname()[1], human)
    config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False,
                            lifespan="on", ws="none", timeout_graceful_shutdown=5)
    return Server(config)


def serve(home: Path, port: int, open_browser: bool = True, human: bool = False) -> Outcome:
    """Serve until Ctrl-C; the URL is the one line on stdout. With ``human`` the page answers
    the open questions of debates run with ``--human``."""
    if not home.is_dir():
        raise UsageError(f"{home}: no such directory (--home)")
    sock = bind(port)
    try:
        server = make_server(home, sock, human)
        url = url_of(sock)
        print(url, flush=True)
        print(f"watching the debates under {home / '.debate'}; Ctrl-C stops", file=sys.stderr)
        if human:
            print("the page may answer the questions of debates run with --human",
                  file=sys.stderr)
        if open_browser:
            webbrowser.open(url)
        server.run_on(sock)
    finally:
        sock.close()
    return Outcome(EXIT_OK, None, "stopped", "the viewer stopped")
