"""Cancellation as an object: one token per debate (or per command), which whatever hosts the
use case cancels — the CLI from its signal handlers, a server from a request — from any thread.

Processes register what ends them; ``cancel`` runs those hooks at once (in parallel: each may
wait out a grace period) and every later registration runs its hook immediately, so a turn that
starts after the cancel never gets going.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class CancelToken:
    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._hooks: dict[int, Callable[[], None]] = {}
        self._next = 0
        self._armed = 0

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        """Stop: every registered hook runs now (in threads, joined), later ones at once."""
        with self._lock:
            self._event.set()
            hooks = list(self._hooks.values())
        threads = [threading.Thread(target=h) for h in hooks]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def on_cancel(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Run ``hook`` when cancelled (now, if already); returns what unregisters it."""
        with self._lock:
            if not self._event.is_set():
                key = self._next
                self._next += 1
                self._hooks[key] = hook
                return lambda: self._drop(key)
        hook()
        return lambda: None

    def _drop(self, key: int) -> None:
        with self._lock:
            self._hooks.pop(key, None)

    @property
    def armed(self) -> bool:
        """True while a use case is inside the part that a cancel ends cleanly (the debate's
        loop, with its ledger and artifacts written afterwards). Outside it, a host may
        prefer to stop the command outright, as the CLI does with Ctrl-C at start-up."""
        return self._armed > 0

    @contextmanager
    def arm(self) -> Iterator[CancelToken]:
        with self._lock:
            self._armed += 1
        try:
            yield self
        finally:
            with self._lock:
                self._armed -= 1
