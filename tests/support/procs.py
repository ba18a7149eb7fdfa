"""Finding the processes a test started, by a marker in their environment, and proving that
none outlives it: the fake agents in tests/fakes and how to wait on what they do."""

from __future__ import annotations

import os
import signal
import sys
import time
import uuid
from pathlib import Path

import pytest

FAKES = Path(__file__).resolve().parents[1] / "fakes"
AGENT = (sys.executable, str(FAKES / "agent.py"))  # no PATH lookup, no pyenv shim
MARKER_VAR = "DISPUTATIO_TEST_MARKER"


def marked_processes(marker: str) -> list[tuple[int, str]]:
    """Live processes (pid, cmdline) whose environment carries ``MARKER_VAR=marker``."""
    needle = f"{MARKER_VAR}={marker}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            env = Path(entry.path, "environ").read_bytes()
            cmd = Path(entry.path, "cmdline").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            found.append((int(entry.name), cmd.replace(b"\0", b" ").decode(errors="replace")))
    return found


def gone(marker: str, within: float = 3.0) -> bool:
    """True once no marked process is left: SIGKILL is asynchronous, so a process killed a
    moment ago may still be listed (never longer than the kernel needs to tear it down)."""
    deadline = time.monotonic() + within
    while (left := marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not left, f"processes outlived their run: {left}"
    return True


def wait_for(predicate, timeout: float = 30.0, what: str = "condition", every: float = 0.02):
    """Poll an observable condition until it holds (returns its value) or fail at the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"{what}: not reached within {timeout} s")


def kill_survivors(marker: str) -> None:
    """SIGKILL, by pid, whatever still carries the marker (cleanup after a failed test)."""
    for pid, _ in marked_processes(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def env():
    """Our environment plus a unique marker, so every process of the test can be found: the
    test fails if one outlives it, and leaks nothing when it does."""
    from disputatio.adapters import transport

    marker = uuid.uuid4().hex
    yield {**os.environ, MARKER_VAR: marker}
    transport.reset_interrupt()
    try:
        gone(marker)
    finally:
        kill_survivors(marker)


def fake(name: str, **knobs) -> dict:
    """A ``command`` participant running tests/fakes/agent.py with its FAKE_* knobs."""
    return {"adapter": "command", "name": name, "argv": list(AGENT),
            "env": {f"FAKE_{k.upper()}": str(v) for k, v in knobs.items()}}


def own_python(script: Path, into: Path) -> Path:
    """An executable in ``into`` that runs ``script`` (as itself: its ``__file__`` is its own)
    under this interpreter, for where a fake must be run by its path (a CLI's ``bin``):
    ``#!/usr/bin/env python3`` would look python3 up on PATH, and a pyenv shim there costs a
    dozen processes a run."""
    launcher = into / script.name
    launcher.write_text(f"#!{sys.executable}\nimport runpy\n"
                        f"runpy.run_path({str(script)!r}, run_name='__main__')\n")
    launcher.chmod(0o755)
    return launcher


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def sh(tmp_path: Path, script: str, env: dict, timeout_s: float = 30, **kw):
    """``sh -c SCRIPT`` as the engine runs a turn: its checkout ``tmp_path/ck`` (made if need
    be), its raw output under ``tmp_path/raw``; ``stdin`` (bytes) is its prompt, the rest goes
    to ``transport.run``."""
    from disputatio.adapters import transport
    from disputatio.adapters.base import Invocation

    (tmp_path / "ck").mkdir(exist_ok=True)
    inv = Invocation(argv=("sh", "-c", script), stdin=kw.pop("stdin", None))
    return transport.run(inv, tmp_path / "ck", timeout_s, tmp_path / "raw", "turn", env, **kw)
