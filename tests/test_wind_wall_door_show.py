"""disputatio show of a Wind/Wall/Door debate on a terminal: the vote is a vote (no verdict),
each turn's role said once, the lines of ours as text rather than markdown, and a failed turn
placed by its turn and round."""

from __future__ import annotations

import json
from pathlib import Path

from support import invoke, one_path, sim, write_config


def _debate(home: Path, people: list[dict]) -> Path:
    path = write_config(home / "d.yaml", people)
    ran = invoke("--config", str(path), "--protocol", "wind-wall-door", "-q", "Tabs?",
                 cwd=home)
    assert ran.returncode in (0, 1), ran.stderr
    return one_path(ran.stdout).parent


def _show(home: Path, folder: Path) -> str:
    ran = invoke("show", str(folder), cwd=home)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def test_show_calls_the_vote_a_vote_and_says_each_role_once(home):
    # Wall rejects every synthesis: a stalemate
    folder = _debate(home, [sim("ada"), sim("bob", DISPUTATIO_SIM_VOTE="reject"), sim("cy")])
    out = _show(home, folder)
    status = out.splitlines()[1]
    assert status.startswith("status stalemate — Wall rejected Door's synthesis")
    assert "verdict" not in status
    assert "answered · wind · round 1 · simulated" in out
    assert "answered · wind · vote · round 1 · simulated" in out
    assert "wind · wind" not in out and "door · door" not in out
    # debate.json keeps the last vote under its key
    assert json.loads((folder / "debate.json").read_text())["verdict"] == "REJECT"


def test_show_prints_the_roles_and_our_remarks_as_text_not_markdown(home):
    out = _show(home, _debate(home, [sim("ada"), sim("bob"), sim("cy")]))
    assert "\nThe roles\n" in out and "\n- Wind (pathos, “What if…”): ada\n" in out
    assert "CALL THE VOTE\n\nDoor called the vote on its synthesis at turn 3.\n" in out
    assert "## The roles" not in out and "**Wind**" not in out and "_Door called" not in out


def test_a_failed_turn_is_placed_by_its_turn_and_round(home):
    folder = _debate(home, [sim("ada"), sim("bob", DISPUTATIO_SIM_FAIL=1), sim("cy")])
    degraded = [line for line in _show(home, folder).splitlines()
                if line.startswith("degraded:")]
    assert len(degraded) == 1 and degraded[0].startswith(
        "degraded: bob failed (api_error) in round 1, turn 2: "), degraded
