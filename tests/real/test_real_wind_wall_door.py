"""A Wind/Wall/Door debate of real CLIs against the scripted model server: claude plays Wind
and Door, pi plays Wall; the server answers each role within its contract, Wall rejects the
first synthesis and approves the refinement, so the debate ends as ``synthesis``.

Why: the pure tests prove the rules; only real CLIs show that each role's prompt reaches them,
that their answers come back through the adapters intact enough for the contract checks, the
call for the vote and the vote parsing, and that a rejection's feedback reaches Door.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from support import real_tier

from .clis import clean_env, lingering, write_lineup
from .model_server import Rule, Text

pytestmark = pytest.mark.real

QUESTION = "Should calc.add reject non-numbers?"
FEEDBACK = "Name the test that proves the rejection."
WIND = ("What if…\n\n1. What if add raises TypeError on non-numbers?\n2. What if it coerces "
        "strings?\n\nWhich callers pass strings today?")
WALL = ("VERDICT: option 1 holds; option 2 hides bugs.\n\n## Evidence\n\n- calc.py:2 adds "
        "whatever it is given.")
DOOR = "Therefore…\n\n1. Raise TypeError for non-numbers.\n2. Add a test.\n\nCALL THE VOTE"
REFINED = ("Therefore…\n\n1. Raise TypeError for non-numbers.\n2. Add test_add_rejects_str."
           "\n\nCALL THE VOTE")


def phase(name: str):
    return lambda r: f"(phase: {name}" in r.prompt


@pytest.fixture
def calc_repo(tmp_path) -> Path:
    return real_tier.calc_repo(tmp_path)


def test_real_clis_play_the_roles_and_reach_an_approved_synthesis(real_clis, model_server,
                                                                  calc_repo, tmp_path):
    model_server.script(
        Rule(phase("wind"), Text(WIND)), Rule(phase("wall"), Text(WALL)),
        Rule(phase("door"), Text(DOOR)), Rule(phase("refine"), Text(REFINED)),
        # pi, the second of the lineup, is Participant B to the agents
        Rule(lambda r: "(phase: vote, on synthesis 1)" in r.prompt
             and "You are Participant B" in r.prompt, Text(f"REJECT\n\n{FEEDBACK}")),
        Rule(phase("vote"), Text("APPROVE")))
    config = write_lineup(tmp_path / "wwd.yaml", real_clis, model_server.url,
                          tmp_path / "homes", names=("claude", "pi"))
    data = yaml.safe_load(config.read_text())
    del data["judge"]
    data["protocol"] = {"wind": "claude", "wall": "pi", "door": "claude"}
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    work = tmp_path / "work"
    work.mkdir()
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "disputatio", "run", "--protocol",
                          "wind-wall-door", "--config", str(config), "--repo", str(calc_repo),
                          QUESTION], cwd=work, env=clean_env(tmp_path / "user-home"),
                         capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    info = f"exit {run.returncode}\n{run.stderr[-3000:]}"
    assert run.returncode == 0, info
    synthesis = Path(run.stdout.strip())
    assert synthesis.name == "synthesis.md", info
    result = json.loads((synthesis.parent / "debate.json").read_text())
    assert result["status"] == "synthesis" and result["verdict"] == "APPROVE", info
    assert [(t["turn_id"], t["adapter"], t["ok"]) for t in result["turns"]] == [
        ("turn-1/wind", "claude", True), ("turn-2/wall", "pi", True),
        ("turn-3/door", "claude", True), ("vote-1/wind", "claude", True),
        ("vote-1/wall", "pi", True), ("refine-1/door", "claude", True),
        ("vote-2/wind", "claude", True), ("vote-2/wall", "pi", True)], info
    md = (synthesis.parent / "debate.md").read_text()
    assert "Contract warning" not in md, md      # the answers kept their shape through the CLIs
    # Wall's feedback reached Door's refinement; Wall saw Wind's options before it spoke
    refine = [r for r in model_server.turns if phase("refine")(r)]
    assert refine and FEEDBACK in refine[0].prompt
    wall = [r for r in model_server.turns if phase("wall")(r)]
    assert wall and "What if add raises TypeError" in wall[0].prompt
    text = synthesis.read_text()
    assert "**Outcome: synthesis**" in text and "test_add_rejects_str" in text
    assert "CALL THE VOTE" not in text
    assert lingering(str(tmp_path / "homes")) == []
    print(f"\nwind-wall-door of claude and pi: {time.monotonic() - started:.1f}s")
