"""stderr as the command line writes to it: progress, warnings and the closing line are for a
reader who may leave. When the terminal closes (EIO) or the reader of a pipe exits
(``disputatio … 2>&1 | head``: EPIPE), what follows is dropped instead of raised, so the debate
still ends the way it would have — agents stopped, the ledger's last event written, the
artifacts rendered, temp dirs removed — rather than dying on a progress line."""

from __future__ import annotations

import os
from typing import Any, TextIO


class Lenient:
    """Wraps a text stream; after its first failed write or flush, writes go nowhere. Its file
    descriptor then points at /dev/null, so that what the stream still holds, and the
    interpreter's last flush at exit, fail no more."""

    def __init__(self, stream: TextIO):
        self._stream = stream
        self.gone = False

    def _lost(self) -> None:
        self.gone = True
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)
        except (OSError, ValueError, AttributeError):   # no descriptor (a StringIO): fine
            pass

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._stream.write(text)
            except (OSError, ValueError):   # ValueError: the stream was closed under us
                self._lost()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._lost()

    def isatty(self) -> bool:
        try:
            return not self.gone and self._stream.isatty()
        except (OSError, ValueError):
            return False

    def __getattr__(self, name: str) -> Any:   # fileno, encoding, … as the stream has them
        return getattr(self._stream, name)
