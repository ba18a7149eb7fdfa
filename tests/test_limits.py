"""Per-seat limits: each seat's own ``timeout_minutes``, and ``max_parallel`` agents at once,
proven through the CLI with fake agents and what the ledger and the agents recorded."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from disputatio import ledger
from support import AGENT, invoke, run_cli, sim, write_config

# A fake agent that logs "start|end <name> <monotonic ns>" to $LOG (one write each, O_APPEND:
# lines from agents running at once do not mix). With $FAIL_ONCE it fails the first time; with
# $WAIT_FOR=N it answers only once N agents have started (so it needs N running at once); with
# $WAIT_TURN=<role> it answers only once that role's turn is in the ledger $LEDGER_GLOB.
LOGGING_AGENT = r'''
import glob, json, os, sys, time
name, log = os.environ["NAME"], os.environ["LOG"]
def note(what):
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{what} {name} {time.monotonic_ns()}\n".encode())
    os.close(fd)
def finished(role):
    for path in glob.glob(os.environ["LEDGER_GLOB"]):
        for line in open(path):
            e = json.loads(line)
            if e["type"] == "turn_completed" and e["data"]["role"] == role:
                return True
    return False
sys.stdin.read()
note("start")
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    if os.environ.get("WAIT_FOR"):
        if open(log).read().count("start ") >= int(os.environ["WAIT_FOR"]):
            break
    elif os.environ.get("WAIT_TURN"):
        if finished(os.environ["WAIT_TURN"]):
            break
    else:
        break
    time.sleep(0.01)
else:
    note("end"); sys.exit("gave up waiting")
flag = os.environ.get("FAIL_ONCE")
if flag and not os.path.exists(flag):
    open(flag, "w").close()
    note("end"); sys.exit("failing once")
note("end")
print(f"answer from {name}")
'''


def logging_agent(home: Path, name: str, **env) -> dict:
    script = home / "logging_agent.py"
    script.write_text(LOGGING_AGENT)
    return {"adapter": "command", "name": name, "argv": [sys.executable, str(script)],
            "env": {"NAME": name, "LOG": str(home / "agents.log"),
                    "LEDGER_GLOB": str(home / ".debate" / "*" / "events.jsonl"), **env}}


def intervals(home: Path) -> list[tuple[int, int]]:
    """(start, end) of every agent run, from what the agents logged."""
    open_at: dict[str, int] = {}
    out = []
    for line in (home / "agents.log").read_text().splitlines():
        what, name, ns = line.split()
        if what == "start":
            assert name not in open_at, f"{name} started twice at once"
            open_at[name] = int(ns)
        else:
            out.append((open_at.pop(name), int(ns)))
    assert not open_at, f"never ended: {open_at}"
    return out


def most_at_once(runs: list[tuple[int, int]]) -> int:
    edges = sorted([(s, 1) for s, _ in runs] + [(e, -1) for _, e in runs])
    now = peak = 0
    for _, step in edges:   # at equal times an end (-1) sorts before a start
        now += step
        peak = max(peak, now)
    return peak


def most_in_ledger(events) -> int:
    """The most turns the ledger shows running at once (started, not yet completed)."""
    running = peak = 0
    for e in events:
        running += {"turn_started": 1, "turn_completed": -1}.get(e.type, 0)
        peak = max(peak, running)
    return peak


def the_debate(home: Path) -> Path:
    (folder,) = (home / ".debate").glob("debate-*")
    return folder


@pytest.mark.process
def test_each_seat_runs_under_its_own_timeout(home):
    """The debate's timeout is the default; a seat's own timeout_minutes replaces it. `slow`
    (the default, 0.6 s) times out; `patient` (its own minute) is still running then, and
    answers only after slow's timeout is in the ledger."""
    slow = {"adapter": "command", "name": "slow", "argv": list(AGENT),
            "env": {"FAKE_HANG": "1", "FAKE_IGNORE_TERM": "1"}}
    patient = {**logging_agent(home, "patient", WAIT_TURN="slow"), "timeout_minutes": 1}
    cfg = write_config(home / "d.yaml", [slow, patient, {**sim("third"), "timeout_minutes": 1}],
                       judge={"adapter": "simulated", "name": "judge", "model": "judge",
                              "timeout_minutes": 1},
                       rounds=0, timeout_minutes=0.01)
    r = run_cli("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    turns = {e.data["role"]: e.data for e in ledger.load(the_debate(home) / "events.jsonl")
             if e.type == "turn_completed"}
    assert turns["slow"]["failure"] == "timeout"
    # the configured limit, not the limit plus the grace it took to kill an agent ignoring TERM
    assert turns["slow"]["message"] == "no answer within 0.6 s"
    assert turns["slow"]["duration_s"] > 2
    assert turns["patient"]["ok"] and turns["patient"]["duration_s"] > 0.6
    assert turns["third"]["ok"] and turns["judge"]["ok"]


def test_max_parallel_one_runs_one_agent_at_a_time_also_on_resume(home):
    """--max-parallel 1 is recorded with the debate: the first run (every proposal fails once,
    so it aborts) and the --resume that retries them both run one agent at a time."""
    people = [logging_agent(home, n, FAIL_ONCE=str(home / f"failed-{n}")) for n in "abc"]
    cfg = write_config(home / "d.yaml", people, rounds=1)
    r = invoke("q", "--config", str(cfg), "--max-parallel", "1", cwd=home)
    assert r.returncode == 1 and "proposal" in r.stderr, r.stderr
    folder = the_debate(home)
    r = invoke("--resume", "--debate", str(folder), cwd=home)
    assert r.returncode == 0, r.stderr
    events = ledger.load(folder / "events.jsonl")
    assert events[0].data["max_parallel"] == 1
    runs = intervals(home)
    assert len(runs) == 3 + 3 + 3   # failed proposals, retried proposals, reactions
    assert most_at_once(runs) == 1
    # and as the engine saw it: no turn started before the one before it had finished
    assert most_in_ledger(events) == 1


def test_max_parallel_caps_a_step_without_serialising_it(home):
    """max_parallel: 2 of three: the agents wait for a second one to start, so the step can
    only finish if two run at once, and the cap keeps the third waiting."""
    people = [logging_agent(home, n, WAIT_FOR="2") for n in "abc"]
    cfg = write_config(home / "d.yaml", people, rounds=0, max_parallel=2)
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    assert most_at_once(intervals(home)) == 2
    events = ledger.load(the_debate(home) / "events.jsonl")
    assert events[0].data["max_parallel"] == 2
    assert most_in_ledger(events) == 2
