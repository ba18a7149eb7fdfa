"""Recorded debates (tests/fixtures/ledgers), each a folder as a user's .debate holds it, and
the means to put one there."""

from __future__ import annotations

import shutil
from pathlib import Path

LEDGERS = Path(__file__).resolve().parents[1] / "fixtures" / "ledgers"
RESOLVED = LEDGERS / "v0.1.0-41135e7"               # resumed, answered, finalized
INTERRUPTED = LEDGERS / "v0.1.0-41135e7-interrupted"


def place(base: Path, source: Path, stamp: str) -> Path:
    """A copy of the recorded debate ``source`` as ``base/.debate/debate-<stamp>``."""
    dest = base / ".debate" / f"debate-{stamp}"
    shutil.copytree(source, dest)
    return dest
