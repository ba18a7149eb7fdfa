"""However a run ends — a turn timing out, Ctrl-C, SIGTERM, kill -9, a concurrent run — no agent
process and no temp path survives it (or the next run sweeps them), and the debate can finish.

Each test gives disputatio a private TMPDIR (so "nothing left" is checkable without racing other
tests) and a unique marker variable, inherited by every process it starts, to find them in /proc.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from disputatio import ledger
from support import (
    alive,
    fake,
    gone,
    marked_processes,
    run_cli,
    sim,
    wait_for,
    write_config,
)
from support.box import events, final_report, start, turns

pytestmark = pytest.mark.process  # disputatio as its own process, ended every way it can be


def cli(b, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    cwd.mkdir(exist_ok=True)
    return run_cli(*args, cwd=cwd, env=b.env, timeout=60)


def roots_of(b, pid: int) -> set[Path]:
    """Temp roots in our TMPDIR whose owner marker names this pid."""
    out = set()
    for p in b.tmp.glob("disputatio-*"):
        try:
            if json.loads((p / "owner.json").read_text())["pid"] == pid:
                out.add(p)
        except (OSError, ValueError):
            continue
    return out


def children(pid_dir: Path, role: str = "child") -> list[int]:
    return [int(p.name.split("-")[1]) for p in pid_dir.glob(f"{role}-*")] \
        if pid_dir.is_dir() else []


def test_a_timed_out_turn_kills_its_whole_tree_and_the_debate_goes_on(box):
    cfg = write_config(box.home / "d.yaml", [
        sim("a"), sim("b"), fake("stubborn", tree=1, ignore_term=1, hang=1)], rounds=0)
    started = time.monotonic()
    r = cli(box, box.home, "q", "--config", str(cfg), "--repo", str(box.repo),
            "--timeout", "0.05", "-q")
    elapsed = time.monotonic() - started
    final_report(r)
    done = turns(events(box.home))
    assert done["proposal/stubborn"]["failure"] == "timeout"
    assert 3.0 <= done["proposal/stubborn"]["duration_s"] < 3.0 + 2.0 + 1.5  # timeout + grace
    assert done["proposal/a"]["ok"] and done["proposal/b"]["ok"] and done["respondeo-1"]["ok"]
    assert elapsed < 20, f"the debate took {elapsed:.1f} s"
    assert gone(box.marker)
    assert list(box.tmp.iterdir()) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_mid_turn_ends_everything_then_resume_finishes(box, tmp_path, sig):
    pids, release = tmp_path / "pids", tmp_path / "release"
    pids.mkdir()
    cfg = write_config(box.home / "d.yaml", [
        sim("a"), fake("hanger", tree=1, hang_until=release, pid_dir=pids)], rounds=1)
    proc = start(box, box.home, "q", "--config", str(cfg), "--repo", str(box.repo), "-q")
    wait_for(lambda: "proposal/a" in turns(events(box.home)) and children(pids, "grandchild"),
             30, "a answered while the hanger's tree runs")
    assert len(roots_of(box, proc.pid)) == 2  # the snapshot and the workspaces
    sent = time.monotonic()
    proc.send_signal(sig)
    assert proc.wait(timeout=15) == 130
    assert time.monotonic() - sent < 6
    assert "disputatio resume --debate" in proc.err.read_text()
    evs = events(box.home)
    assert evs[-1].type == "interrupted"
    assert "proposal/hanger" in turns(evs, "turn_interrupted")
    assert gone(box.marker)
    assert list(box.tmp.iterdir()) == []

    release.touch()
    r = cli(box, box.home, "--resume", "-q")
    final_report(r)
    done = turns(events(box.home))
    assert done["proposal/hanger"]["ok"] and done["reaction-1/hanger"]["ok"]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=box.repo,
                          capture_output=True, text=True).stdout.strip()
    assert done["proposal/hanger"]["text"] == f"fake agent answered in repo at {head}"
    assert gone(box.marker)
    assert list(box.tmp.iterdir()) == []


def _litter_left(b) -> int:
    """Directories of the agent's litter still in its checkout (-1: no checkout yet or gone)."""
    found = list(b.tmp.glob("disputatio-*/p/*/*/litter"))   # directories are numbered
    try:
        return len(os.listdir(found[0])) if found else -1
    except OSError:
        return -1


def test_a_second_ctrl_c_during_cleanup_leaves_nothing_the_next_run_keeps(box, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    files = 30_000  # removing them takes ~0.4 s: long enough for a second Ctrl-C to land
    cfg = write_config(tmp_path / "d.yaml", [
        sim("a"), fake("litter", files=files, hang=1, pid_dir=pids)], rounds=0)
    proc = start(box, box.home, "q", "--config", str(cfg), "--repo", str(box.repo), "-q")
    wait_for(lambda: children(pids) and "proposal/a" in turns(events(box.home)), 60,
             "the agent has littered its checkout")
    total = _litter_left(box)
    assert total == files // 500
    proc.send_signal(signal.SIGINT)
    wait_for(lambda: _litter_left(box) < total, 15, "cleanup under way", every=0.001)
    proc.send_signal(signal.SIGINT)  # the impatient user presses Ctrl-C again
    assert proc.wait(timeout=30) == 130
    assert events(box.home)[-1].type == "interrupted"
    final_report(cli(box, box.home / "c", "--demo", "-q"))  # the next run sweeps
    assert list(box.tmp.iterdir()) == []
    assert gone(box.marker)


def test_kill_9_leftovers_are_swept_by_the_next_run_but_not_a_live_runs(box, tmp_path):
    pa, pb = tmp_path / "pids-a", tmp_path / "pids-b"
    pa.mkdir()
    pb.mkdir()
    go_a, go_b = tmp_path / "go-a", tmp_path / "go-b"
    # A: a long debate that must survive everything below, with a reaction round that needs
    # its checkouts again after the sweep
    cfg_a = write_config(tmp_path / "a.yaml", [
        sim("a"), fake("waiter", tree=1, hang_until=go_a, pid_dir=pa)], rounds=1)
    a = start(box, box.home / "a", "q", "--config", str(cfg_a), "--repo", str(box.repo), "-q")
    wait_for(lambda: children(pa, "grandchild"), 30, "A mid-turn")
    cfg_b = write_config(tmp_path / "b.yaml", [
        sim("a"), fake("victim", hang_until=go_b, pid_dir=pb)], rounds=0)
    b = start(box, box.home / "b", "q", "--config", str(cfg_b), "--repo", str(box.repo), "-q")
    wait_for(lambda: children(pb) and "proposal/a" in turns(events(box.home / "b")), 30,
             "B mid-turn, its other proposal done")
    roots_a, roots_b = roots_of(box, a.pid), roots_of(box, b.pid)
    assert len(roots_a) == 2 and len(roots_b) == 2

    b.kill()
    b.wait()
    victim = children(pb)[0]
    wait_for(lambda: not alive(victim), 5, "B's agent died with B")
    assert all(p.exists() for p in roots_b), "kill -9 leaves its temp roots behind"

    c = cli(box, box.home / "c", "--demo", "-q")  # any next run sweeps
    final_report(c)
    assert not any(p.exists() for p in roots_b)
    assert roots_of(box, a.pid) == roots_a and a.poll() is None
    assert all(alive(p) for p in children(pa) + children(pa, "grandchild"))  # A's whole tree

    go_a.touch()
    assert a.wait(timeout=60) == 0, a.err.read_text()
    done = turns(events(box.home / "a"))
    assert done["proposal/waiter"]["ok"] and done["reaction-1/waiter"]["ok"]
    assert Path(a.out.read_text().strip()).name == "final-report.md"

    go_b.touch()
    r = cli(box, box.home / "b", "--resume", "-q")
    final_report(r)
    started = [e.data["turn_id"] for e in events(box.home / "b") if e.type == "turn_started"]
    assert started.count("proposal/victim") == 2 and started.count("proposal/a") == 1
    assert gone(box.marker)
    assert list(box.tmp.iterdir()) == []


def test_kill_9_orphans_are_ended_by_the_next_run(box, tmp_path):
    """PR_SET_PDEATHSIG takes only the agent itself down with disputatio; its children outlive
    a kill -9 until the next run finds them by their owner and ends them."""
    pids = tmp_path / "pids"
    pids.mkdir()
    cfg = write_config(tmp_path / "d.yaml", [sim("a"), fake("tree", tree=1, hang=1,
                                                               pid_dir=pids)], rounds=0)
    proc = start(box, box.home / "b", "q", "--config", str(cfg), "--repo", str(box.repo), "-q")
    wait_for(lambda: children(pids, "grandchild"), 30, "the agent's tree runs")
    proc.kill()
    proc.wait()
    wait_for(lambda: not alive(children(pids)[0]), 5, "the agent died with disputatio")
    final_report(cli(box, box.home / "c", "--demo", "-q"))  # the next run sweeps
    assert list(box.tmp.iterdir()) == []
    assert gone(box.marker), marked_processes(box.marker)


def test_two_debates_on_one_repo_at_once_both_finish(box, tmp_path):
    go = tmp_path / "go"
    procs, dirs = [], []
    for n in (1, 2):
        pids = tmp_path / f"pids-{n}"
        pids.mkdir()
        dirs.append(pids)
        cfg = write_config(tmp_path / f"{n}.yaml", [
            sim("a"), fake("both", tree=1, hang_until=go, pid_dir=pids)], rounds=1)
        procs.append(start(box, box.home, "q", "--config", str(cfg), "--repo", str(box.repo),
                           "-q"))
    # both are mid-turn at the same moment, each with its own snapshot and checkouts
    wait_for(lambda: all(children(d) for d in dirs), 30, "both debates mid-turn")
    assert all(len(roots_of(box, p.pid)) == 2 for p in procs)
    go.touch()
    assert [p.wait(timeout=60) for p in procs] == [0, 0], [p.err.read_text() for p in procs]
    reports = {Path(p.out.read_text().strip()) for p in procs}
    folders = sorted((box.home / ".debate").glob("debate-*"))
    assert len(folders) == 2 and {r.parent for r in reports} == set(folders)
    for folder in folders:
        assert (folder / "final-report.md").is_file()
        assert ledger.verify(folder / "events.jsonl")[0]
        done = turns(ledger.load(folder / "events.jsonl"))
        assert done["proposal/both"]["ok"] and done["reaction-1/both"]["ok"]
    assert gone(box.marker)
    assert list(box.tmp.iterdir()) == []
