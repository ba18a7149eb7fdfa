"""What the user sees on stderr while a debate runs: plain lines (CI, pipes) or a live table.

stdout is never touched here: it carries only the primary artifact's path.
"""

from __future__ import annotations

import sys
import threading
import time

from disputatio.adapters.base import TurnResult
from disputatio.protocols.base import TurnSpec


class PlainProgress:
    """One line per event, no control codes: safe for logs, pipes and CI."""

    def __init__(self, stream=None, quiet: bool = False):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self._lock = threading.Lock()
        self._t0 = time.monotonic()

    def _line(self, text: str) -> None:
        if self.quiet:
            return
        with self._lock:
            print(f"[{time.monotonic() - self._t0:6.1f}s] {text}", file=self.stream, flush=True)

    def header(self, debate_dir: str, lineup: str) -> None:
        self._line(f"debate {debate_dir} · {lineup}")

    def phase(self, name: str, roles: list[str]) -> None:
        self._line(f"— {name}: {', '.join(roles)}")

    def turn_started(self, spec: TurnSpec) -> None:
        self._line(f"{spec.role}: {spec.phase} started")

    def turn_finished(self, spec: TurnSpec, result: TurnResult, duration_s: float) -> None:
        if result.ok:
            cost = "" if result.cost_usd is None else f" · ${result.cost_usd:.2f}"
            self._line(f"{spec.role}: {spec.phase} done in {duration_s:.1f}s{cost}")
        else:
            self._line(f"{spec.role}: {spec.phase} FAILED ({result.failure}) {result.message}")

    def note(self, text: str) -> None:
        self._line(text)

    def close(self) -> None:
        pass


def warn(text: str) -> None:
    """A warning that shows even with --quiet: the user needs to know."""
    print(f"warning: {text}", file=sys.stderr, flush=True)
