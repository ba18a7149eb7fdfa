"""Whole committee meetings through the command line (in this process) with simulated members:
what the user is shown, and what debate.md, minutes.md and debate.json say of rounds, passes,
drops and the reason the meeting ended."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from disputatio import app, config, human, ledger
from disputatio.context import RunContext
from disputatio.events import HumanActed
from disputatio.outcome import EXIT_OK
from disputatio.protocols import committee
from support import invoke, one_path, sim


def lineup(path: Path, members: list[dict], judge: dict | None = None, **top) -> Path:
    data = {**top, "participants": members, **({"judge": judge} if judge else {})}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def trio(**env) -> list[dict]:
    return [sim("advocate", **env), sim("skeptic", **env), sim("pragmatist", **env)]


def meet(home: Path, cfg: Path, *args: str):
    return invoke("run", "--protocol", "committee", "--config", str(cfg), *args,
                  "Tabs or spaces?", cwd=home)


def test_a_meeting_without_a_judge_ends_all_passed_with_its_minutes(home, tmp_path):
    ran = meet(home, lineup(tmp_path / "c.yaml", trio()))
    assert ran.returncode == 0, ran.stderr
    minutes = one_path(ran.stdout)
    assert minutes.name == "minutes.md"
    assert ran.stderr.endswith("\nthe meeting ended: every member passed in round 3\n")
    folder = minutes.parent
    data = json.loads((folder / "debate.json").read_text())
    assert data["status"] == "all-passed" and data["judge"] is None
    assert [t["turn_id"] for t in data["turns"]][:3] == [
        "round-1/advocate", "round-1/skeptic", "round-1/pragmatist"]
    md = (folder / "debate.md").read_text()
    assert "## Round 1 — advocate" in md and "## Round 2 — skeptic" in md
    # a round's passes are one line, after what was said in it, not a section each
    assert "passes — " not in md and "&lt;PASS/&gt;" not in md and "<PASS/>" not in md
    assert "## Round 2 — skeptic" in md.split("## Round 2, passes\n\nadvocate and "
                                               "pragmatist passed.\n", 1)[0]
    assert "## Round 3, passes\n\nEvery member passed: advocate, skeptic and pragmatist.\n" \
        in md
    assert md.count("## Round 2, passes") == 1
    text = minutes.read_text()
    assert "**The meeting ended:** every member passed in round 3." in text
    assert "all-passed" not in text
    skeptic = text.split("### skeptic", 1)[1].split("### pragmatist", 1)[0]
    assert "Passed in round 3." in skeptic and "Last contribution (round 2):" in skeptic
    assert "judge None" not in text
    assert "## The meeting" in text and "### Round 3" in text


def test_a_member_that_keeps_failing_is_dropped_visibly(home, tmp_path):
    members = [sim("advocate"), sim("bob", DISPUTATIO_SIM_FAIL=1), sim("pragmatist")]
    ran = meet(home, lineup(tmp_path / "c.yaml", members), "-q")
    assert ran.returncode == 0, ran.stderr
    folder = one_path(ran.stdout).parent
    line = ("bob is dropped from the meeting after 3 failed attempts in round 1 (api_error: "
            "simulated failure: the participant was told to fail).")
    assert f"warning: {line}" in ran.stderr               # the progress view's system line
    started = [e.data["turn_id"] for e in ledger.load(folder / "events.jsonl")
               if e.type == "turn_started" and e.data["role"] == "bob"]
    assert started == ["round-1/bob", "round-1/bob/attempt-2", "round-1/bob/attempt-3"]
    md = (folder / "debate.md").read_text()
    assert "## Round 1, attempt 3, dropped — bob" in md
    assert f"## System, after round 1\n\n{line}" in md
    assert md.index("## System, after round 1") < md.index("## Round 2, passes")
    assert "bob failed 3 attempts; the last failed (api_error) in round 1 (attempt 3)" in md
    minutes = (folder / "minutes.md").read_text()
    assert "dropped: bob in round 1" in minutes
    assert line in minutes.split("### bob", 1)[1] and "Never spoke." in minutes
    prompt = next((folder / "raw").glob("*round-2-advocate.prompt.md")).read_text()
    assert f"- System: Participant B {line.removeprefix('bob ')}" in prompt
    assert "bob" not in prompt


def test_rounds_on_the_command_line_caps_the_meeting(home, tmp_path):
    cfg = lineup(tmp_path / "c.yaml", trio(DISPUTATIO_SIM_SPEAKS=9), rounds=5)
    ran = meet(home, cfg, "-q", "--rounds", "2")
    assert ran.returncode == 0, ran.stderr
    data = json.loads((one_path(ran.stdout).parent / "debate.json").read_text())
    assert data["status"] == "max-rounds" and data["rounds"] == 2
    assert len(data["turns"]) == 6
    # the lineup's top-level rounds (the disputatio protocol's) leaves the default cap
    again = meet(home, lineup(tmp_path / "d.yaml", trio(), rounds=1), "-q")
    assert json.loads((one_path(again.stdout).parent / "debate.json").read_text())[
        "rounds"] == 8


def test_settings_out_of_range_are_one_line_and_exit_2(home, tmp_path):
    ran = meet(home, lineup(tmp_path / "c.yaml", trio()), "--rounds", "17")
    assert ran.returncode == 2 and ran.stdout == ""
    assert ran.stderr.strip().splitlines() == [                         # the flag's fault
        "error: --rounds: Input should be less than or equal to 16 (for this protocol "
        "--rounds sets max_rounds)"]
    cfg = lineup(tmp_path / "d.yaml", trio(), protocol={"attempts": 0})
    ran = meet(home, cfg)
    assert ran.returncode == 2 and "protocol.attempts" in ran.stderr
    assert not (home / ".debate").exists() or not list((home / ".debate").glob("debate-*"))


def test_the_demo_meets_and_the_judge_rules(home):
    ran = invoke("--demo", "--protocol", "committee", "-q", "Tabs or spaces?", cwd=home)
    assert ran.returncode == 0, ran.stderr
    report = one_path(ran.stdout)
    assert report.name == "final-report.md"
    folder = report.parent
    assert {"minutes.md", "respondeo.md", "debate.md"} <= {p.name for p in folder.iterdir()}
    judge_prompt = next((folder / "raw").glob("*respondeo-1.prompt.md")).read_text()
    assert "### Round 3" in judge_prompt and "- Participant B passed in round 3." in judge_prompt
    ruling = (folder / "respondeo.md").read_text()   # findings read as the house reads them
    assert ruling.startswith("# Respondeo\n\n**Verdict: RESOLVED**")
    assert "Participant A (advocate)" in ruling
    data = json.loads((folder / "debate.json").read_text())
    assert data["status"] == "resolved"
    assert data["reason"] == "the meeting ended: every member passed in round 3"
    assert invoke("verify", "--debate", str(folder), cwd=home).returncode == 0


def test_continue_is_refused_for_a_meeting_without_a_judge(home, tmp_path):
    folder = one_path(meet(home, lineup(tmp_path / "c.yaml", trio()), "-q").stdout).parent
    ran = invoke("continue", "--debate", str(folder), "use tabs", cwd=home)
    assert ran.returncode == 2 and "ran without a judge" in ran.stderr


def test_the_human_closes_the_meeting(home, tmp_path):
    asked = []

    def closes(ask):
        asked.append(ask)
        return HumanActed(key=ask.key, round=ask.round, action="pick", choice=committee.CLOSE)

    cfg, _ = config.load(lineup(tmp_path / "c.yaml", trio(DISPUTATIO_SIM_SPEAKS=9)))
    out = app.run("Tabs or spaces?", cfg, app.RunOptions(quiet=True, human=True), base=home,
                  protocol="committee", context=RunContext(human=closes))
    assert out.code == EXIT_OK and out.status == committee.CANCELLED
    assert [a.key for a in asked] == ["round-1"]
    # at the terminal, the option's number picks it
    assert human.parse("p 1", asked[0]) == HumanActed(key="round-1", round=1, action="pick",
                                                      choice=committee.CLOSE)
    md = (out.path.parent / "debate.md").read_text()
    assert "## The human, after round 1\n\nCloses the meeting." in md
    assert "**The meeting ended:** the human closed it after 1 round." in (
        out.path.parent / "minutes.md").read_text()


def test_a_judge_who_needs_input_is_answered_with_continue(home, tmp_path):
    judge = {"adapter": "simulated", "name": "judge", "model": "judge",
             "env": {"DISPUTATIO_SIM_STATUS": "needs_input"}}
    ran = meet(home, lineup(tmp_path / "c.yaml", trio(), judge=judge), "-q")
    assert ran.returncode == 0, ran.stderr
    asked = one_path(ran.stdout)
    assert asked.name == "respondeo.md" and "the judge needs your input" in ran.stderr
    again = invoke("continue", "--debate", str(asked.parent), "-q", "Readability first",
                   cwd=home)
    assert again.returncode == 0, again.stderr
    assert one_path(again.stdout).name == "final-report.md"
    prompt = next((asked.parent / "raw").glob("*respondeo-2.prompt.md")).read_text()
    assert "> Readability first" in prompt and "## The meeting" in prompt
    assert invoke("verify", "--debate", str(asked.parent), cwd=home).returncode == 0
