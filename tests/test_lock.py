"""One writer per debate: a command that would append to a debate another process is writing is
refused at once (exit 75, one line naming that process) and the ledger stays a single chain; a
lock left by a process killed with -9 never blocks; reading (``--verify``) never waits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from disputatio import app, ledger
from support import alive, fake, marked_processes, run_cli, sim, wait_for, write_config
from support.box import events, final_report, start, turns

BUSY = 75


def timed(b, cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    began = time.monotonic()
    r = run_cli(*args, cwd=cwd, env=b.env, timeout=30)
    return r, time.monotonic() - began


def assert_busy(r: subprocess.CompletedProcess, elapsed: float, folder: Path, pid: int) -> None:
    assert r.returncode == BUSY, (r.returncode, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("warning: ")]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"error: {folder} is in use by disputatio (pid {pid}, started ")
    assert "disputatio resume --debate" in lines[0] and r.stdout == ""
    assert elapsed < 5, f"refused only after {elapsed:.1f} s"


def assert_one_chain(folder: Path) -> list[ledger.Event]:
    evs = ledger.load(folder / "events.jsonl")
    assert [e.seq for e in evs] == list(range(1, len(evs) + 1))
    ok, message = ledger.verify(folder / "events.jsonl")
    assert ok, message
    return evs


def running(cwd: Path, turn_id: str) -> bool:
    """The turn has started and not ended: its writer is inside the debate."""
    evs = events(cwd)
    return turn_id in turns(evs, "turn_started") and turn_id not in turns(evs)


@pytest.mark.process
def test_resume_and_continue_are_refused_while_the_debate_runs(box, tmp_path):
    go = tmp_path / "go"
    cfg = write_config(tmp_path / "d.yaml", [sim("a"), fake("waiter", hang_until=go)],
                       rounds=0)
    proc = start(box, box.home, "q", "--config", str(cfg), "-q")
    wait_for(lambda: running(box.home, "proposal/waiter") and "proposal/a" in
             turns(events(box.home)), 30, "the debate is mid-turn")
    folder = next((box.home / ".debate").glob("debate-*"))
    for args in (["--resume"], ["--continue", "use the fast path"], ["--finalize"]):
        r, elapsed = timed(box, box.home, *args, "--debate", str(folder), "-q")
        assert_busy(r, elapsed, folder, proc.pid)
    r, elapsed = timed(box, box.home, "--verify")  # reading never waits for the writer
    assert r.returncode == 0 and r.stderr.startswith("ok "), r.stderr
    assert elapsed < 5

    go.touch()
    assert proc.wait(timeout=60) == 0, proc.err.read_text()
    evs = assert_one_chain(folder)
    started = [e.data["turn_id"] for e in evs if e.type == "turn_started"]
    assert started.count("proposal/waiter") == 1 and started.count("respondeo-1") == 1
    assert not any(e.type in ("resumed", "answers_given", "finalize_requested") for e in evs)


@pytest.mark.process
def test_two_continues_at_once_one_is_refused(box, tmp_path):
    go = tmp_path / "go"
    go.touch()  # the judge answers at once, twice without a findings block: UNCLEAR
    cfg = write_config(tmp_path / "d.yaml", [sim("a"), sim("b")],
                       judge=fake("judge", hang_until=go), rounds=0)
    r = run_cli("q", "--config", str(cfg), "-q", cwd=box.home, env=box.env, timeout=60)
    assert r.returncode == 0 and Path(r.stdout.strip()).name == "respondeo.md", r.stderr
    folder = Path(r.stdout.strip()).parent
    go.unlink()
    first = start(box, box.home, "--continue", "first answers", "-q")
    wait_for(lambda: running(box.home, "respondeo-2"), 30, "the judge is ruling again")
    r, elapsed = timed(box, box.home, "--continue", "second answers", "-q")
    assert_busy(r, elapsed, folder, first.pid)
    r, _ = timed(box, box.home, "--verify", "--debate", str(folder))
    assert r.returncode == 0, r.stderr

    go.touch()
    assert first.wait(timeout=60) == 0, first.err.read_text()
    evs = assert_one_chain(folder)
    assert [e.data["answers"] for e in evs if e.type == "answers_given"] == ["first answers"]


@pytest.mark.process
def test_a_lock_left_by_kill_9_does_not_block_resume(box, tmp_path):
    """The kernel drops the lock with its holder's last descriptor; an agent's grandchild that
    outlives the kill does not hold it (the descriptor is not inherited)."""
    go = tmp_path / "go"
    cfg = write_config(tmp_path / "d.yaml", [sim("a"), fake("tree", tree=1, hang_until=go)],
                       rounds=0)
    proc = start(box, box.home, "q", "--config", str(cfg), "-q")

    def grandchildren() -> list[int]:
        return [pid for pid, cmd in marked_processes(box.marker) if "--grandchild" in cmd]

    wait_for(grandchildren, 30, "the agent's tree runs")
    folder = next((box.home / ".debate").glob("debate-*"))
    assert json.loads((folder / ".lock").read_text())["pid"] == proc.pid
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    grandchild = grandchildren()[0]
    assert alive(grandchild)  # still running when the resume takes the lock
    assert json.loads((folder / ".lock").read_text())["pid"] == proc.pid  # left behind

    go.touch()
    r, _ = timed(box, box.home, "--resume", "-q")
    final_report(r)
    assert not alive(grandchild)  # the resume's orphan sweep ended it, after taking the lock
    evs = assert_one_chain(folder)
    assert [e.type for e in evs].count("resumed") == 1


def test_the_lock_is_exclusive_within_one_process_too_and_not_inherited(tmp_path):
    with ledger.WriterLock(tmp_path, "--resume") as held:
        fd = held._fd
        assert fd is not None and not os.get_inheritable(fd)
        with pytest.raises(ledger.Busy) as busy, ledger.WriterLock(tmp_path, "--continue"):
            pass
        assert f"(pid {os.getpid()}, started " in str(busy.value)
        assert "with --resume)" in str(busy.value)
    with ledger.WriterLock(tmp_path, "--continue"):  # released on exit
        pass
    assert (tmp_path / ".lock").read_text() == ""  # no owner left to name


def test_a_busy_debate_is_refused_before_its_ledger_is_read(tmp_path):
    """The lock comes first: a writer never verifies or mends a ledger another one is
    appending to (the broken line below would otherwise be reported as a broken ledger)."""
    folder = tmp_path / ".debate" / "debate-x"
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text("not an event\n{}\n")
    with ledger.WriterLock(folder, "a new debate"), pytest.raises(app.Busy):
        app.resume(folder, quiet=True)
    assert (folder / "events.jsonl").read_text() == "not an event\n{}\n"
