"""A Wind/Wall/Door debate as a user runs it: ``python -m disputatio run --protocol
wind-wall-door`` with fake CLIs (``adapter: command``) that answer each role's prompt; the
limits from ``--rounds``; and a debate killed with -9 during Door's turn that ``resume``
finishes, the ledger verifying at every point."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

from disputatio import ledger
from support import gone, run_cli, wait_for, write_config
from support.box import events, start

pytestmark = pytest.mark.process

# A fake agent CLI: reads its prompt on stdin and answers as the role the prompt names.
# FAKE_HOLD: Door never calls the vote. FAKE_REJECT_FIRST: votes REJECT on synthesis 1.
# FAKE_WAIT: Door answers only once this file exists.
FAKE = '''
import os, re, sys, time
prompt = sys.stdin.read()
phase = re.search(r"\\(phase: (\\w+)", prompt).group(1)
wait = os.environ.get("FAKE_WAIT")
while phase == "door" and wait and not os.path.exists(wait):
    time.sleep(0.02)
if phase == "wind":
    print("1. What if we cache?\\n2. What if we shard?\\n\\nWhich one can we measure?")
elif phase == "wall":
    print("VERDICT: caching holds.\\n\\n## Evidence\\n\\n- bench: 2x")
elif phase in ("door", "refine"):
    hold = os.environ.get("FAKE_HOLD")
    print("1. Cache the hot path.\\n2. Measure." + ("" if hold else "\\n\\nCALL THE VOTE"))
elif phase == "vote":
    first = "on synthesis 1)" in prompt and os.environ.get("FAKE_REJECT_FIRST")
    print("REJECT\\n\\nMeasure first." if first else "APPROVE")
'''


def lineup(tmp_path: Path, **env) -> Path:
    script = tmp_path / "fake_role.py"
    script.write_text(FAKE)
    knobs = {k: str(v) for k, v in env.items()}
    people = [{"adapter": "command", "name": n, "argv": [sys.executable, str(script)],
               **({"env": knobs} if knobs else {})} for n in ("ann", "bob", "cy")]
    return write_config(tmp_path / "wwd.yaml", people,
                        protocol={"wind": "cy", "wall": "ann", "door": "bob"})


def test_a_debate_with_fake_clis_reaches_an_approved_synthesis(box, tmp_path):
    cfg = lineup(tmp_path, FAKE_REJECT_FIRST=1)
    r = run_cli("run", "--protocol", "wind-wall-door", "Cache or shard?", "--config", str(cfg),
                cwd=box.home, env=box.env)
    assert r.returncode == 0, r.stderr
    path = Path(r.stdout.strip())
    assert path.name == "synthesis.md" and path.is_file(), r.stdout
    data = json.loads((path.parent / "debate.json").read_text())
    assert data["status"] == "synthesis" and data["verdict"] == "APPROVE"
    assert [(t["turn_id"], t["role"], t["seat"]) for t in data["turns"]] == [
        ("turn-1/wind", "cy", "wind"), ("turn-2/wall", "ann", "wall"),
        ("turn-3/door", "bob", "door"), ("vote-1/wind", "cy", "wind"),
        ("refine-1/door", "bob", "door"), ("vote-2/wind", "cy", "wind"),
        ("vote-2/wall", "ann", "wall")]
    md = (path.parent / "debate.md").read_text()
    assert "## Wall · “Yes, but…” · turn 2, round 1 — ann" in md
    assert "## Vote on synthesis 1, Wind: REJECT — cy" in md
    assert "- **Judge:** none (the lineup's judge takes no part in this protocol)" in md
    synthesis = path.read_text()
    assert "· 3 participants · Wind cy · Wall ann · Door bob" in synthesis
    assert "judge" not in synthesis.split("# Synthesis")[0]
    assert "**Outcome: synthesis** — Wind and Wall approved Door's synthesis after 1 " \
           "refinement" in synthesis and "1. Cache the hot path." in synthesis
    assert run_cli("verify", "--debate", str(path.parent), cwd=box.home).returncode == 0
    assert gone(box.marker)


def test_rounds_on_the_command_line_bound_the_debate_which_ends_in_exhaustion(box, tmp_path):
    cfg = lineup(tmp_path, FAKE_HOLD=1)
    r = run_cli("--protocol", "wind-wall-door", "Cache or shard?", "--config", str(cfg),
                "--rounds", "1", cwd=box.home, env=box.env)
    assert r.returncode == 0, r.stderr
    assert "exhaustion: 1 round, the most allowed (max_rounds 1), and Door never called " \
           "the vote" in r.stderr
    evs = events(box.home)
    started = evs[0].data
    assert started["rounds"] == 1 and started["settings"]["max_rounds"] == 1
    assert [e.data["turn_id"] for e in evs if e.type == "turn_completed"] == [
        "turn-1/wind", "turn-2/wall", "turn-3/door"]
    assert evs[-1].type == "debate_ended" and evs[-1].data["status"] == "exhaustion"
    assert "never voted on" in Path(r.stdout.strip()).read_text()


def test_kill_9_during_doors_turn_then_resume_finishes_and_verify_stays_green(box, tmp_path):
    go = tmp_path / "go"
    cfg = lineup(tmp_path, FAKE_WAIT=go)
    proc = start(box, box.home, "--protocol", "wind-wall-door", "Cache or shard?",
                 "--config", str(cfg), "-q")
    wait_for(lambda: any(e.type == "turn_started" and e.data["turn_id"] == "turn-3/door"
                         for e in events(box.home)), 60, "Door's turn starts")
    debate = next((box.home / ".debate").glob("debate-*"))
    assert run_cli("verify", "--debate", str(debate), cwd=box.home).returncode == 0
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    r = run_cli("verify", "--debate", str(debate), cwd=box.home)
    assert r.returncode == 0, r.stderr
    go.touch()
    r = run_cli("resume", "--debate", str(debate), "-q", cwd=box.home, env=box.env)
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()) == debate / "synthesis.md"
    evs = ledger.load(debate / "events.jsonl")
    done = [e.data["turn_id"] for e in evs if e.type == "turn_completed"]
    assert done == ["turn-1/wind", "turn-2/wall", "turn-3/door", "vote-1/wind", "vote-1/wall"]
    assert [e.type for e in evs].count("resumed") == 1
    assert evs[-1].data["status"] == "synthesis"
    assert run_cli("verify", "--debate", str(debate), cwd=box.home).returncode == 0
    assert gone(box.marker)
