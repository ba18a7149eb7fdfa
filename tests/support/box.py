"""disputatio running in the background as a user starts it, in a box that makes "nothing was
left behind" checkable: a repository, a private TMPDIR and a marker every process it starts
inherits; whatever a failed test leaves running is killed by pid afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from disputatio import ledger
from support.git import make_repo
from support.procs import MARKER_VAR, kill_survivors


@pytest.fixture
def box(home, tmp_path):
    """A repository, a private TMPDIR and a marker; leftovers are killed by pid afterwards."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    marker = uuid.uuid4().hex
    b = SimpleNamespace(home=home, tmp=tmp, marker=marker, repo=make_repo(tmp_path / "repo"),
                        env={"TMPDIR": str(tmp), MARKER_VAR: marker}, procs=[])
    yield b
    for p in b.procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    kill_survivors(marker)


def start(b, cwd: Path, *args: str) -> subprocess.Popen:
    """disputatio in the background, as a user starts it; its stdout and stderr go to files
    (``proc.out``, ``proc.err``) beside cwd."""
    cwd.mkdir(exist_ok=True)
    n = len(b.procs)
    out, err = cwd.parent / f"{cwd.name}-{n}.stdout", cwd.parent / f"{cwd.name}-{n}.stderr"
    with open(out, "w") as fo, open(err, "w") as fe:
        proc = subprocess.Popen([sys.executable, "-m", "disputatio", *args], cwd=cwd,
                                env={**os.environ, **b.env}, stdin=subprocess.DEVNULL,
                                stdout=fo, stderr=fe)
    proc.out, proc.err = out, err
    b.procs.append(proc)
    return proc


def events(cwd: Path) -> list:
    """The newest debate's ledger under cwd (none yet: empty)."""
    found = sorted((cwd / ".debate").glob("debate-*/events.jsonl"))
    return ledger.load(found[-1]) if found else []


def turns(evs, kind: str = "turn_completed") -> dict[str, dict]:
    return {e.data["turn_id"]: e.data for e in evs if e.type == kind}


def final_report(r) -> Path:
    """The command succeeded and printed the path of its final report."""
    assert r.returncode == 0, r.stderr
    path = Path(r.stdout.strip())
    assert path.name == "final-report.md" and path.is_file(), r.stdout
    return path
