"""The run context: what a host hands a use case for one debate — a cancel token, where
warnings and notes go, and who follows the ledger as it grows. Nothing process-wide: two debates
in two threads each have their own, and no use case touches signal handlers (a face does)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from disputatio.cancel import CancelToken
from disputatio.events import EventData, HumanActed
from disputatio.ledger import Event, Ledger
from disputatio.text import sanitize

Subscriber = Callable[[EventData], None]
# The human in the loop: shown a protocol's question (``protocols.base.Ask``), answers with the
# event to record, or None when they left (Ctrl-C, end of input): the debate stops, resumable.
Human = Callable[[Any], HumanActed | None]


def _stderr_warning(text: str) -> None:
    """A warning that shows even with --quiet: the user needs to know."""
    print(f"warning: {sanitize(text)}", file=sys.stderr, flush=True)


def _stderr_note(text: str) -> None:
    print(text, file=sys.stderr)


@dataclass
class RunContext:
    cancel: CancelToken = field(default_factory=CancelToken)
    warn: Callable[[str], None] = _stderr_warning
    note: Callable[[str], None] = _stderr_note   # the closing summary line (not with --quiet)
    subscribers: list[Subscriber] = field(default_factory=list)
    human: Human | None = None   # a face that can ask the human (--human on a terminal)
    debate_dir: Path | None = None   # the folder of the debate being driven, once there is one
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, ledger: Ledger, event: EventData) -> Event:
        """Append ``event`` to the ledger, then tell every subscriber (in append order: the
        lock keeps parallel turns from overtaking each other between the two)."""
        with self._lock:
            appended = ledger.append(event.TYPE, event.to_data())
            for tell in self.subscribers:
                tell(event)
        return appended
