"""A use case hosted off the main thread: the run context's cancel token, not a signal, stops a
debate (its agents end, the ledger says interrupted, resume finishes it), and two debates in two
threads keep to themselves — no signal handler, no process-wide flag between them."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from disputatio import app, config, ledger
from disputatio.context import RunContext
from support import alive, sim, wait_for, write_config

AGENT = [sys.executable, str(Path(__file__).parent / "fakes" / "agent.py")]


def hanger(release: Path, pids: Path) -> dict:
    """A participant that answers only once ``release`` exists, its pid noted in ``pids``."""
    return {"adapter": "command", "name": "hanger", "argv": AGENT,
            "env": {"FAKE_HANG_UNTIL": str(release), "FAKE_PID_DIR": str(pids)}}


def in_thread(target, *args, **kwargs) -> tuple[threading.Thread, dict]:
    box: dict = {}

    def body():
        try:
            box["outcome"] = target(*args, **kwargs)
        except BaseException as exc:  # the test reports it, not the thread
            box["error"] = exc
    t = threading.Thread(target=body)
    t.start()
    return t, box


def types(debate: Path) -> list[str]:
    return [e.type for e in ledger.load(debate / "events.jsonl")]


def the_debate(base: Path) -> Path:
    found = list((base / ".debate").glob("debate-*"))
    assert len(found) == 1
    return found[0]


def test_a_debate_in_a_thread_is_cancelled_by_its_token_and_resume_finishes_it(home, tmp_path):
    release, pids = tmp_path / "release", tmp_path / "pids"
    pids.mkdir()
    cfg, _ = config.load(write_config(tmp_path / "d.yaml", [sim("a"), hanger(release, pids)],
                                      rounds=0))
    ctx = RunContext(warn=lambda _: None, note=lambda _: None)
    thread, box = in_thread(app.run, "q", cfg, app.RunOptions(quiet=True), base=home,
                            context=ctx)
    wait_for(lambda: list(pids.iterdir()), 30, "the hanger runs")
    pid = int(next(pids.iterdir()).name.rsplit("-", 1)[1])
    assert alive(pid)
    ctx.cancel.cancel()
    thread.join(timeout=20)
    assert not thread.is_alive() and "error" not in box, box.get("error")
    assert box["outcome"].code == app.EXIT_INTERRUPTED
    assert not alive(pid)
    debate = the_debate(home)
    assert types(debate)[-1] == "interrupted" and "turn_interrupted" in types(debate)

    release.touch()
    thread, box = in_thread(app.resume, debate, quiet=True, context=RunContext(
        warn=lambda _: None, note=lambda _: None))
    thread.join(timeout=60)
    assert "error" not in box, box.get("error")
    assert box["outcome"].code == app.EXIT_OK and box["outcome"].status == "resolved"
    assert box["outcome"].path == debate / "final-report.md"


def test_two_debates_in_two_threads_keep_to_themselves(home, tmp_path):
    release, pids = tmp_path / "release", tmp_path / "pids"
    later, later_pids = tmp_path / "later", tmp_path / "later-pids"
    pids.mkdir()
    later_pids.mkdir()
    stopped_base, finished_base = tmp_path / "one", tmp_path / "two"
    stopped_base.mkdir()
    finished_base.mkdir()
    hanging, _ = config.load(write_config(tmp_path / "h.yaml",
                                          [sim("a"), hanger(release, pids)], rounds=0))
    quick, _ = config.load(write_config(tmp_path / "q.yaml",
                                        [hanger(later, later_pids), sim("c")], rounds=1))
    warned: list[str] = []
    stopped = RunContext(warn=warned.append, note=lambda _: None)
    finished = RunContext(warn=warned.append, note=lambda _: None)
    t1, box1 = in_thread(app.run, "q1", hanging, app.RunOptions(quiet=True),
                         base=stopped_base, context=stopped)
    wait_for(lambda: list(pids.iterdir()), 30, "the hanger runs")
    t2, box2 = in_thread(app.run, "q2", quick, app.RunOptions(quiet=True),
                         base=finished_base, context=finished)
    # the second debate's agent is running when the first debate is cancelled
    wait_for(lambda: list(later_pids.iterdir()), 30, "the second debate runs")
    stopped.cancel.cancel()
    t1.join(timeout=20)
    assert not t1.is_alive()
    later.touch()
    t2.join(timeout=60)
    assert not t2.is_alive()
    assert "error" not in box1 and "error" not in box2, (box1.get("error"), box2.get("error"))
    assert box1["outcome"].code == app.EXIT_INTERRUPTED
    assert box2["outcome"].code == app.EXIT_OK and box2["outcome"].status == "resolved"
    assert "turn_interrupted" not in types(the_debate(finished_base))
    assert types(the_debate(stopped_base))[-1] == "interrupted"
    assert not finished.cancel.cancelled
    release.touch()
