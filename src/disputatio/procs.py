"""Process identity, shared by whoever must tell a live process from a dead one or a reused
pid (the leftover sweep of temp roots, the orphan sweep of agent processes), and the guard
that takes an agent down with disputatio."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path


def _load_prctl():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_prctl = _load_prctl() if sys.platform.startswith("linux") else None


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


def orphan_guard(argv: list[str], bwrap: bool):
    """``(argv, preexec_fn)`` such that the agent dies with disputatio, even on ``kill -9``.
    A fenced agent has bwrap's ``--die-with-parent``; otherwise util-linux's ``setpriv`` sets
    the parent-death signal just before it becomes the agent. Both leave Python free to
    ``vfork``: a ``preexec_fn`` makes it copy this whole process per turn (milliseconds for a
    large one), so it is only the last resort."""
    if bwrap:
        return argv, None
    found = setpriv()
    if found is not None:
        return [found, "--pdeathsig", "KILL", "--", *argv], None
    return argv, (die_with_parent if _prctl is not None else None)


_setpriv: list[str | None] = []   # the probe's finding, once it has one


def setpriv() -> str | None:
    """setpriv, if it is here and sets a parent-death signal (util-linux 2.33 and later). A
    probe that could not run (no process to spare just then) is tried again next time rather
    than leave every later turn to the slower fork."""
    if _setpriv:
        return _setpriv[0]
    path = shutil.which("setpriv") if _prctl is not None else None
    if path is not None:
        try:
            probe = subprocess.run([path, "--pdeathsig", "KILL", "--", path, "--version"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        path = path if probe.returncode == 0 else None
    _setpriv[:] = [path]
    return path


def die_with_parent() -> None:
    """In the child before exec: if disputatio is killed (even ``kill -9``), the kernel kills
    the agent too, so no CLI keeps running unobserved. Loaded in the parent, because a child
    forked from a threaded process must not import anything."""
    if _prctl is not None:
        _prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
