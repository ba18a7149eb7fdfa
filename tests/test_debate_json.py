"""debate.json names what a machine needs without reading prose: the protocol, its ending in
the protocol's own word (a committee's ``all-passed`` even after its judge ruled), and the
rounds held beside the rounds set, for every protocol."""

from __future__ import annotations

import json

from support import invoke, one_path, sim, write_config


def _record(ran) -> dict:
    assert ran.returncode in (0, 1), ran.stderr
    return json.loads((one_path(ran.stdout).parent / "debate.json").read_text())


def test_a_judged_committee_names_why_the_meeting_ended_and_the_rounds_it_held(home):
    cfg = write_config(home / "c.yaml", [sim("ada"), sim("bob"), sim("cy")],
                       protocol={"max_rounds": 6})
    data = _record(invoke("run", "--protocol", "committee", "--config", str(cfg), "-q",
                          "Tabs or spaces?", cwd=home))
    assert data["protocol"] == "committee"
    assert data["status"] == "resolved" and data["ending"] == "all-passed"
    held = max(t["round"] for t in data["turns"] if t["phase"] == "contribution")
    assert data["rounds"] == 6 and data["rounds_held"] == held == 2
    assert data["reason"]   # the prose stays beside the field


def test_a_committee_stopped_by_its_cap_says_max_rounds(home):
    cfg = write_config(home / "c.yaml", [sim("ada"), sim("bob")], protocol={"max_rounds": 2})
    data = _record(invoke("run", "--protocol", "committee", "--config", str(cfg), "-q",
                          "Tabs or spaces?", cwd=home))
    assert (data["ending"], data["rounds"], data["rounds_held"]) == ("max-rounds", 2, 2)


def test_the_disputatio_protocol_ends_in_its_status_and_counts_reaction_rounds(home):
    data = _record(invoke("--demo", "--rounds", "2", "-q", cwd=home))
    assert data["protocol"] == "disputatio"
    assert data["ending"] == data["status"] == "resolved"
    assert data["rounds"] == 2 and data["rounds_held"] == 2


def test_wind_wall_door_ends_in_its_own_word(home):
    cfg = write_config(home / "w.yaml", [sim("ada"), sim("bob"), sim("cy")])
    data = _record(invoke("run", "--protocol", "wind-wall-door", "--config", str(cfg), "-q",
                          "Tabs?", cwd=home))
    assert data["protocol"] == "wind-wall-door"
    assert data["ending"] == data["status"] and data["ending"] in (
        "synthesis", "stalemate", "exhaustion")
    held = max(t["round"] for t in data["turns"] if t["phase"] in ("wind", "wall", "door"))
    assert data["rounds"] == 4 and data["rounds_held"] == held
