"""A committee meeting as a user runs it — ``python -m disputatio run --protocol committee`` — with
members that are other programs (``command`` entries), killed with -9 in the middle of a round
and finished by ``disputatio resume``, the ledger verifying at every point."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from support import AGENT, alive, gone, run_cli, wait_for
from support.box import events, start, turns

pytestmark = pytest.mark.process

# A member that reads its prompt on stdin, speaks in round 1 and passes from round 2; with
# GATE set, its round-2 turn first says it is waiting (GATE.waiting, holding its pid) and
# answers only once GATE exists.
MEMBER = r"""
import os, re, sys, time
prompt = sys.stdin.read()
rnd = int(re.search(r"round (\d+) of at most", prompt).group(1))
gate = os.environ.get("GATE")
if gate and rnd == 2:
    with open(gate + ".waiting." + os.environ["WHO"], "w") as fh:
        fh.write(str(os.getpid()))
    while not os.path.exists(gate):
        time.sleep(0.02)
print("<PASS/>" if rnd > 1 else os.environ["WHO"] + " says: spaces, as PEP 8 does")
"""


def member(name: str, **env) -> dict:
    return {"adapter": "command", "name": name, "argv": [sys.executable, "-c", MEMBER],
            "env": {"WHO": name, **{k: str(v) for k, v in env.items()}}}


def lineup(path: Path, members: list[dict], **top) -> Path:
    path.write_text(yaml.safe_dump({**top, "participants": members}, sort_keys=False))
    return path


def verify(b, folder: Path) -> None:
    ran = run_cli("verify", "--debate", str(folder), cwd=b.home, env=b.env, timeout=60)
    assert ran.returncode == 0, ran.stderr


def test_a_meeting_of_programs_runs_to_its_cap_when_one_never_passes(box, tmp_path):
    cfg = lineup(tmp_path / "c.yaml", [member("ada"), member("bob"),
                                       {"adapter": "command", "name": "fake", "argv": AGENT}],
                 protocol={"max_rounds": 3})
    ran = run_cli("run", "--protocol", "committee", "--config", str(cfg), "--repo",
                  str(box.repo), "Tabs or spaces?", cwd=box.home, env=box.env, timeout=90)
    assert ran.returncode == 0, ran.stderr
    minutes = Path(ran.stdout.strip())
    assert minutes.name == "minutes.md"
    done = turns(events(box.home))
    # the fake agent never passes, so the meeting runs to its cap
    assert json.loads((minutes.parent / "debate.json").read_text())["status"] == "max-rounds"
    assert done["round-3/fake"]["text"].startswith("fake agent answered in ")
    assert done["round-2/ada"]["text"] == "<PASS/>"
    assert "> bob says: spaces, as PEP 8 does" in minutes.read_text()
    verify(box, minutes.parent)
    assert gone(box.marker)


def test_kill_9_mid_round_then_resume_finishes_the_meeting(box, tmp_path):
    gate = tmp_path / "gate"
    cfg = lineup(tmp_path / "c.yaml", [member("ada"), member("bob", GATE=gate)])
    proc = start(box, box.home, "run", "--protocol", "committee", "--config", str(cfg),
                 "--repo", str(box.repo), "-q", "Tabs or spaces?")
    waiting = Path(f"{gate}.waiting.bob")
    wait_for(waiting.exists, 60, "bob's round-2 turn is running")
    folder = next((box.home / ".debate").glob("debate-*"))
    verify(box, folder)                                    # mid-meeting, the writer still live
    agent = int(wait_for(lambda: waiting.read_text(), 5, "bob's pid"))
    proc.kill()
    proc.wait()
    wait_for(lambda: not alive(agent), 10, "bob's turn died with disputatio")
    verify(box, folder)
    before = turns(events(box.home))
    assert "round-2/ada" in before and "round-2/bob" not in before

    gate.touch()
    ran = run_cli("resume", "--debate", str(folder), "-q", cwd=box.home, env=box.env,
                  timeout=90)
    assert ran.returncode == 0, ran.stderr
    assert Path(ran.stdout.strip()) == folder / "minutes.md"
    evs = events(box.home)
    started = [e.data["turn_id"] for e in evs if e.type == "turn_started"]
    assert started.count("round-2/bob") == 2 and started.count("round-2/ada") == 1
    assert "round-3/ada" not in started
    ended = [e for e in evs if e.type == "debate_ended"]
    assert [e.data["status"] for e in ended] == ["all-passed"]
    assert ended[0].data["reason"] == "every member passed in round 2"
    verify(box, folder)
    assert gone(box.marker)
