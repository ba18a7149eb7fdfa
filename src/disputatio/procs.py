"""Process identity, shared by whoever must tell a live process from a dead one or a reused
pid: the leftover sweep of temp roots and the orphan sweep of agent processes."""

from __future__ import annotations

import os
from pathlib import Path


def process_start(pid: int) -> str | None:
    """When the process started (a reused pid has another); None: no such process. Without
    /proc (macOS) only existence is known ("?")."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
        return raw[raw.rindex(")") + 2:].split()[19]  # field 22: starttime in clock ticks
    except FileNotFoundError:
        return None
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # alive, someone else's
        pass
    return "?"
