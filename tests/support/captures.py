"""Recorded output of the real CLIs (tests/fixtures/captures), as Captures the parsers read."""

from __future__ import annotations

import json
from pathlib import Path

from disputatio.adapters.base import Capture

FIX = Path(__file__).parents[1] / "fixtures" / "captures"
EXITS = {k: v["exit"] for k, v in json.loads((FIX / "manifest.json").read_text()).items()}


def real(case: str) -> Capture:
    """A recorded run of the real CLI: its stdout/stderr files and its exit code."""
    return Capture(FIX / f"{case}.stdout", FIX / f"{case}.stderr", exit_code=EXITS[case])


def made(tmp_path: Path, stdout: str = "", stderr: str = "", exit_code: int = 0) -> Capture:
    """Hand-made output (blank, garbage, shapes no run produced) for one parse."""
    (tmp_path / "o").write_text(stdout)
    (tmp_path / "e").write_text(stderr)
    return Capture(tmp_path / "o", tmp_path / "e", exit_code=exit_code)


def failed_as(adapter, case: str, kind: str, message: str):
    """Parse a recorded failing run: it fails with ``kind``, its one-line message carrying the
    CLI's own words ``message``. Returns the result for any further check."""
    r = adapter.parse(real(case))
    assert not r.ok and r.failure == kind, r
    assert message in r.message and "\n" not in r.message, r.message
    return r
