"""What a committee tells its user in words, not its statuses' names: why the meeting ended
("the round cap (2) was reached", "1 round"), a closing line that ``-q`` leaves out as the
disputatio protocol does, and the commands to carry on named as subcommands."""

from __future__ import annotations

from pathlib import Path

import yaml

from disputatio.protocols import committee
from support import invoke, one_path, sim


def lineup(path: Path, members: list[dict], judge: dict | None = None, **protocol) -> Path:
    data = {"participants": members, **({"judge": judge} if judge else {}),
            **({"protocol": protocol} if protocol else {})}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def meet(home: Path, cfg: Path, *args: str):
    return invoke("run", "--protocol", "committee", "--config", str(cfg), *args,
                  "Tabs or spaces?", cwd=home)


def talkers() -> list[dict]:
    return [sim("ada", DISPUTATIO_SIM_SPEAKS=9), sim("bob", DISPUTATIO_SIM_SPEAKS=9)]


def test_the_closing_line_says_why_in_words(home, tmp_path):
    ran = meet(home, lineup(tmp_path / "c.yaml", talkers(), max_rounds=2))
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.splitlines()[-1] == "the meeting ended: the round cap (2) was reached"
    folder = one_path(ran.stdout).parent
    minutes = (folder / "minutes.md").read_text()
    assert "**The meeting ended:** the round cap (2) was reached." in minutes
    assert "max-rounds" not in minutes and "held its" not in minutes


def test_quiet_prints_only_the_deliverables_path(home, tmp_path):
    for settings in ({"max_rounds": 2}, {}):          # max-rounds, then all-passed
        members = talkers() if settings else [sim("ada"), sim("bob")]
        ran = meet(home, lineup(tmp_path / "c.yaml", members, **settings), "-q")
        assert ran.returncode == 0
        assert ran.stderr == "" and one_path(ran.stdout).name == "minutes.md"


def test_one_round_is_one_round(home, tmp_path):
    ran = meet(home, lineup(tmp_path / "c.yaml", talkers(), max_rounds=1))
    assert "at most 1 round ·" in ran.stderr and "1 rounds" not in ran.stderr
    state = committee.state([])
    state.participants, state.max_rounds, state.judge = ["ada", "bob"], 1, None
    assert committee.lineup_line(state) == "committee of ada, bob · at most 1 round · no judge"


def test_a_meeting_that_lost_every_member_names_disputatio_resume(home, tmp_path):
    members = [sim("ada", DISPUTATIO_SIM_FAIL=1), sim("bob", DISPUTATIO_SIM_FAIL=1)]
    ran = meet(home, lineup(tmp_path / "c.yaml", members, attempts=1), "-q")
    assert ran.returncode == 1
    assert ran.stderr.startswith("error: every member was dropped, the last in round 1; ")
    assert "`disputatio resume` gives those dropped last another attempt" in ran.stderr
    assert "--resume" not in ran.stderr


def test_a_judge_who_needs_input_names_disputatio_continue(home, tmp_path):
    judge = {"adapter": "simulated", "name": "judge", "model": "judge",
             "env": {"DISPUTATIO_SIM_STATUS": "needs_input"}}
    ran = meet(home, lineup(tmp_path / "c.yaml", [sim("ada"), sim("bob")], judge=judge), "-q")
    assert ran.returncode == 0
    assert 'then answer with disputatio continue "..."' in ran.stderr   # not a closing line
    assert "--continue" not in ran.stderr
