"""A disputatio process on a real pseudo-terminal, as a person at a terminal meets it: stdin and
stderr are the pty's slave side and its controlling terminal (so Ctrl-C is the line discipline's
SIGINT), stdout a pipe; ``expect`` reads the screen with deadlines and ``type`` answers."""

from __future__ import annotations

import codecs
import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from disputatio.text import sanitize

PROMPT = "\n> "


def _take_the_terminal() -> None:
    """In the child: a session of its own, with the pty (its stdin) as controlling terminal."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """disputatio on a pseudo-terminal; ``expect`` reads what it shows, ``type`` answers."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str] | None = None):
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "disputatio", *args], cwd=cwd,
            env={**os.environ, "TERM": "xterm", **(env or {})},
            stdin=slave, stderr=slave, stdout=subprocess.PIPE, text=True,
            preexec_fn=_take_the_terminal)
        os.close(slave)
        self.master = master
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._raw = ""
        self._seen = 0   # how much of the screen text ``expect`` has consumed
        self._closed = False

    @property
    def screen(self) -> str:
        """Everything shown so far, escape sequences and carriage returns taken out."""
        return sanitize(self._raw)

    def _read(self, until: float) -> bool:
        """Read what is there before ``until``; False once the other side is gone."""
        if self._closed:
            return False
        ready, _, _ = select.select([self.master], [], [], max(0.0, until - time.monotonic()))
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:   # EIO: every process holding the slave has exited
            chunk = b""
        if not chunk:
            self._closed = True
            return False
        self._raw += self._decode.decode(chunk)
        return True

    def expect(self, text: str, timeout: float = 60) -> str:
        """Wait for ``text`` to be shown (after what was expected before); return what was
        shown up to and including it."""
        deadline = time.monotonic() + timeout
        while True:
            at = self.screen.find(text, self._seen)
            if at >= 0:
                shown = self.screen[self._seen: at + len(text)]
                self._seen = at + len(text)
                return shown
            if time.monotonic() >= deadline or not self._read(deadline):
                raise AssertionError(f"{text!r} never shown; the screen after the last "
                                     f"match:\n{self.screen[self._seen:]}")

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\r")   # Enter, as a terminal sends it

    def press(self, key: bytes) -> None:
        os.write(self.master, key)

    def finish(self, timeout: float = 60) -> tuple[int, str]:
        """Drain the screen until disputatio exits; its exit code and stdout."""
        deadline = time.monotonic() + timeout
        while self._read(deadline) and time.monotonic() < deadline:
            pass
        code = self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        out = self.proc.stdout.read() if self.proc.stdout else ""
        return code, out

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        os.close(self.master)
