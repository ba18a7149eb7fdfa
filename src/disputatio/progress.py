"""What the user sees on stderr while a debate runs: a live table on a terminal, one plain
line per event otherwise (CI, pipes). stdout is never touched: it carries only the artifact path.
A view follows the ledger (``follow``): the engine appends, the view is told.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from disputatio.adapters.base import TurnResult
from disputatio.events import EventData, TurnEnded, TurnStarted
from disputatio.text import sanitize


class Turn(Protocol):
    """A turn as the view shows it: a protocol's TurnSpec, or the ledger's turn events."""

    @property
    def participant(self) -> str: ...
    @property
    def phase(self) -> str: ...
    @property
    def round(self) -> int: ...


def make(quiet: bool = False, stream=None):
    """The live table when stderr is a terminal, plain lines otherwise."""
    stream = stream or sys.stderr
    if quiet:
        return PlainProgress(stream, quiet=True)
    if stream.isatty() and os.environ.get("TERM") != "dumb":
        return LiveProgress(stream)
    return PlainProgress(stream)


class PlainProgress:
    """One line per event, no control codes: safe for logs, pipes and CI."""

    def __init__(self, stream=None, quiet: bool = False, clock=time.monotonic):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self._clock = clock
        self._lock = threading.Lock()
        self._t0 = clock()

    def _line(self, text: str) -> None:
        if self.quiet:
            return
        with self._lock:
            print(f"[{self._clock() - self._t0:6.1f}s] {sanitize(text)}", file=self.stream,
                  flush=True)

    def header(self, debate_dir: str, lineup: str) -> None:
        self._line(f"debate {debate_dir} · {lineup}")

    def phase(self, name: str, roles: list[str]) -> None:
        self._line(f"— {name}: {', '.join(roles)}")

    def turn_started(self, spec: Turn) -> None:
        self._line(f"{spec.participant}: {spec.phase} started")

    def turn_finished(self, spec: Turn, result: TurnResult, duration_s: float) -> None:
        if result.ok:
            self._line(f"{spec.participant}: {spec.phase} done in {duration_s:.1f}s"
                       f"{_spend(result.cost_usd, result.tokens, ' · ')}")
        else:
            self._line(f"{spec.participant}: {spec.phase} FAILED ({result.failure}) "
                       f"{result.message}")

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Nothing to pause: no turn runs, so no line is printed, while the human is asked."""
        yield

    def close(self) -> None:
        pass


@dataclass
class _Row:
    phase: str = "—"
    round: int = 0
    state: str = "waiting"
    started: float | None = None
    elapsed: float = 0.0
    cost: float | None = None
    cost_known: bool = True
    tokens: int = 0
    tokens_known: bool = True   # False once an answered turn reported no tokens


class LiveProgress:
    """A rich live table: one row per role with phase, round, state, elapsed and spend."""

    def __init__(self, stream, clock=time.monotonic, force_terminal: bool | None = None):
        from rich.console import Console
        from rich.live import Live

        self._clock = clock
        self._lock = threading.Lock()
        self._rows: dict[str, _Row] = {}
        self._title = "disputatio"
        self._phase = "starting"
        self.console = Console(file=stream, highlight=False, force_terminal=force_terminal)
        self._live = Live(get_renderable=self._render, console=self.console,
                          refresh_per_second=4, transient=False)
        self._live.start()

    def header(self, debate_dir: str, lineup: str) -> None:
        with self._lock:
            self._title = f"{debate_dir}  ·  {lineup}"

    def phase(self, name: str, roles: list[str]) -> None:
        with self._lock:
            self._phase = name
            for r in roles:
                self._rows.setdefault(r, _Row())

    def turn_started(self, spec: Turn) -> None:
        with self._lock:
            row = self._rows.setdefault(spec.participant, _Row())
            row.phase, row.round, row.state = spec.phase, spec.round, "running"
            row.started = self._clock()

    def turn_finished(self, spec: Turn, result: TurnResult, duration_s: float) -> None:
        with self._lock:
            row = self._rows.setdefault(spec.participant, _Row())
            row.state = "done" if result.ok else f"failed: {result.failure}"
            row.started = None
            row.elapsed += duration_s
            if result.cost_usd is None:
                row.cost_known = False
            else:
                row.cost = (row.cost or 0.0) + result.cost_usd
            row.tokens += sum(result.tokens.get(k, 0) for k in ("input", "output"))
            if result.ok and not result.tokens:
                row.tokens_known = False

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The table stops redrawing (and gives the terminal back) while the human in the loop
        is asked, and starts again below their answer."""
        self._live.stop()
        try:
            yield
        finally:
            self._live.start()

    def close(self) -> None:
        self._live.stop()

    def _render(self):
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        with self._lock:
            # Text, not str: a name or a path is shown as it is, never read as rich markup.
            # Above the table, not its title: a title wraps at the table's width, and an
            # empty table (a resumed debate, before its first turn) is narrow
            title = Text(sanitize(f"{self._title}\nphase: {self._phase}"))
            table = Table(expand=False)
            for col in ("participant", "phase", "round", "state", "elapsed", "spend"):
                table.add_column(col)
            now = self._clock()
            for name, row in self._rows.items():
                elapsed = row.elapsed + (now - row.started if row.started else 0.0)
                style = "red" if row.state.startswith("failed") else (
                    "green" if row.state == "done" else "")
                spend = _spend(row.cost if row.cost_known else None,
                               {"input": row.tokens} if row.tokens else {}, "") or "—"
                if not row.tokens_known:   # a lower bound says so, as the totals do
                    spend += " (+ unknown)"
                table.add_row(Text(sanitize(name)), row.phase,
                              str(row.round) if row.round else "—",
                              Text(row.state, style=style), f"{elapsed:.1f}s", spend)
        return Group(title, table)


def _spend(cost: float | None, tokens: dict, sep: str) -> str:
    parts = []
    if cost is not None:
        parts.append(f"${cost:.2f}")
    n = sum(tokens.get(k, 0) for k in ("input", "output"))
    if n:
        parts.append(f"{n / 1000:.1f}k tok" if n >= 1000 else f"{n} tok")
    return (sep + " · ".join(parts)) if parts else ""


def follow(view) -> Callable[[EventData], None]:
    """A ledger subscriber that shows each turn's start and end on ``view``."""
    def tell(event: EventData) -> None:
        if isinstance(event, TurnStarted):
            view.turn_started(event)
        elif isinstance(event, TurnEnded):
            view.turn_finished(event, TurnResult(
                ok=event.ok, text=event.text, failure=event.failure, message=event.message or "",
                cost_usd=event.cost_usd, tokens=dict(event.tokens)), event.duration_s or 0.0)
    return tell
