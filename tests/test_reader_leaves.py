"""The reader of stderr may leave while a debate runs: a pipe's reader exits (``2> >(head)``)
or the terminal closes (an ssh session drops, a window is shut: SIGHUP, then EIO on every
write). The debate ends as it would have — finished, or interrupted with its end recorded,
artifacts rendered, agents stopped and temp dirs removed — instead of dying on a progress line.
Under ``nohup`` (SIGHUP ignored) a hangup changes nothing."""

from __future__ import annotations

import fcntl
import io
import os
import signal
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from disputatio import ledger
from disputatio.streams import Lenient
from support import gone, sim, wait_for, write_config
from support.box import events, turns


def _debate(b, cwd: Path, args: list[str], **popen) -> subprocess.Popen:
    cwd.mkdir(exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "disputatio", *args], cwd=cwd,
                            env={**os.environ, **b.env}, **popen)
    b.procs.append(proc)
    return proc


def _finished_and_intact(cwd: Path) -> list:
    folder = sorted((cwd / ".debate").glob("debate-*"))[-1]
    assert (folder / "final-report.md").is_file() and (folder / "debate.md").is_file()
    ledger.verify(folder / "events.jsonl")
    return ledger.load(folder / "events.jsonl")


@pytest.mark.process
def test_a_reader_that_leaves_the_pipe_does_not_end_the_debate(box):
    proc = _debate(box, box.home, ["--demo", "Tabs or spaces?"], stdin=subprocess.DEVNULL,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr is not None and proc.stdout is not None
    assert proc.stderr.readline().strip()        # the first progress line was read …
    proc.stderr.close()                          # … and the reader is gone
    out = proc.stdout.read()
    assert proc.wait(timeout=60) == 0
    assert out.decode().strip().endswith("final-report.md")
    evs = _finished_and_intact(box.home)
    assert evs[-1].type != "interrupted"
    assert list(box.tmp.iterdir()) == []


def _take_the_terminal() -> None:
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@pytest.mark.process
def test_a_terminal_that_closes_interrupts_the_debate_cleanly(box):
    cfg = write_config(box.home / "d.yaml", [sim("a", DISPUTATIO_SIM_HANG=1),
                                             sim("b", DISPUTATIO_SIM_HANG=1)])
    master, slave = os.openpty()
    proc = _debate(box, box.home, ["--config", str(cfg), "Tabs or spaces?"], stdin=slave,
                   stderr=slave, stdout=subprocess.PIPE, preexec_fn=_take_the_terminal)
    os.close(slave)
    try:
        wait_for(lambda: len(turns(events(box.home), "turn_started")) == 2, 30,
                 "both agents at work")
    finally:
        os.close(master)   # the terminal goes: its session leader is sent SIGHUP
    assert proc.wait(timeout=30) == 130
    assert proc.stdout is not None and proc.stdout.read().decode().strip().endswith("debate.md")
    evs = events(box.home)
    assert evs[-1].type == "interrupted"
    assert set(turns(evs, "turn_interrupted")) == {"proposal/a", "proposal/b"}
    folder = sorted((box.home / ".debate").glob("debate-*"))[-1]
    assert (folder / "debate.md").is_file()
    assert gone(box.marker)
    assert list(box.tmp.iterdir()) == []


def _ignore_hangups() -> None:   # as nohup starts a command
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


@pytest.mark.process
def test_under_nohup_a_hangup_changes_nothing(box):
    cfg = write_config(box.home / "d.yaml", [sim("a", DISPUTATIO_SIM_LATENCY=1), sim("b")])
    proc = _debate(box, box.home, ["--config", str(cfg), "-q", "Tabs or spaces?"],
                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   preexec_fn=_ignore_hangups)
    wait_for(lambda: "proposal/b" in turns(events(box.home)), 30, "a turn answered")
    proc.send_signal(signal.SIGHUP)   # while a's turn still runs
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.decode().strip().endswith("final-report.md")
    assert "interrupted" not in [e.type for e in _finished_and_intact(box.home)]


class _Gone(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_lenient_drops_what_follows_a_failed_write():
    lenient = Lenient(_Gone())
    assert lenient.write("progress\n") == len("progress\n")   # no error for the writer
    assert lenient.gone and not lenient.isatty()
    lenient.flush()
    kept = io.StringIO()
    healthy = Lenient(kept)
    healthy.write("warning: x\n")
    healthy.flush()
    assert kept.getvalue() == "warning: x\n" and not healthy.gone
