"""How a Wind/Wall/Door debate reads: a contract note is a remark on the turn it judges (in
``debate.md`` it follows that turn's answer, under its heading, never the heading of the turn
before; a note on the debate's last turn closes the transcript), and counts read as English."""

from __future__ import annotations

from pathlib import Path

import yaml

from support import invoke, one_path, sim, write_config

JUDGE = {"adapter": "simulated", "name": "judge", "model": "judge"}   # write_config's default


def _made(finished, people: list[dict], **settings) -> Path:
    """A copy of a finished debate of ``people`` with the default judge (it may end force
    closed); its folder."""
    lineup = {"protocol": settings, "participants": people, "judge": JUDGE}
    return finished("--protocol", "wind-wall-door", "-q", "Tabs?", lineup=lineup, codes=(0, 1))


def _debate_md(finished, wind: dict | None = None, **settings) -> str:
    wind = wind or sim("ada", DISPUTATIO_SIM_WWD="break")   # breaks every contract
    return (_made(finished, [wind, sim("bob"), sim("cy")], **settings) / "debate.md").read_text()


def _section(md: str, heading_start: str) -> str:
    """The text under the first heading that starts with ``heading_start``, to the next."""
    at = md.index("\n## " + heading_start)
    end = md.find("\n## ", at + 1)
    return md[at:end if end != -1 else len(md)]


def test_a_contract_warning_follows_the_turn_it_is_about(finished):
    md = _debate_md(finished)
    wind = _section(md, "Wind · “What if…” · turn 1")
    assert "Some thoughts from" in wind
    assert "**Contract warning:** this answer breaks Wind's contract" in wind
    assert "Contract warning" not in _section(md, "The roles")


def test_each_refusal_follows_its_own_answer_and_the_last_closes_the_transcript(finished):
    md = _debate_md(finished, strict=True, max_redos=1)
    first = _section(md, "Wind · “What if…” · turn 1, round 1 —")
    redo = _section(md, "Wind · “What if…” · turn 1, round 1 (redo 1)")
    assert first.count("**Refused:**") == 1 and first.index("Some thoughts") < \
        first.index("**Refused:**")
    # the redo is the last turn (force_closed): its refusal comes after it, before the totals
    assert redo.count("**Refused:**") == 1 and redo.index("Some thoughts") < \
        redo.index("**Refused:**")
    assert "Refused" not in _section(md, "The roles")


def test_one_refinement_is_said_in_the_singular(finished):
    md = _debate_md(finished, sim("ada", DISPUTATIO_SIM_VOTE="reject"), max_refinement_loops=1)
    assert "- **Status:** stalemate — Wind rejected Door's synthesis after 1 refinement\n" in md
    assert "· at most 1 refinement · contracts as warnings" in md
    assert "1 refinements" not in md


def test_a_contract_broken_once_with_no_redo_allowed_says_once(finished):
    md = _debate_md(finished, strict=True, max_redos=0)
    assert "- **Status:** force_closed — Wind (ada) broke its contract once (" in md


def _run(home: Path, people: list[dict], judge: bool = True, *args: str, **settings):
    """A debate run from a lineup file (with the default judge, or none); the command's
    output and the debate's folder."""
    path = write_config(home / "d.yaml", people, protocol=settings)
    if not judge:
        data = yaml.safe_load(path.read_text())
        del data["judge"]
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    ran = invoke("--config", str(path), "--protocol", "wind-wall-door", "Tabs?", *args,
                 cwd=home)
    assert ran.returncode in (0, 1), ran.stderr
    return ran, one_path(ran.stdout).parent


def test_a_stalemate_says_who_approved_and_who_rejected(finished):
    # Wind (ada) approves every synthesis, Wall (bob) rejects every one
    folder = _made(finished, [sim("ada"), sim("bob", DISPUTATIO_SIM_VOTE="reject"), sim("cy")],
                   max_refinement_loops=1)
    synthesis = (folder / "synthesis.md").read_text()
    assert "_Wind approved it and Wall rejected it: this is Door's last synthesis" in synthesis
    assert "Wind and Wall did not approve" not in synthesis


def test_a_stalemate_on_winds_rejection_says_wall_did_not_vote(home):
    _, folder = _run(home, [sim("ada", DISPUTATIO_SIM_VOTE="reject"), sim("bob"), sim("cy")],
                     max_refinement_loops=0)
    synthesis = (folder / "synthesis.md").read_text()
    assert "_Wind rejected it, so Wall did not vote on it: this is Door's last" in synthesis


def test_the_last_refusal_of_a_force_closed_debate_says_so(finished):
    md = _debate_md(finished, strict=True, max_redos=1)
    first = _section(md, "Wind · “What if…” · turn 1, round 1 —")
    redo = _section(md, "Wind · “What if…” · turn 1, round 1 (redo 1)")
    assert "; Wind answers again." in first
    assert "; no redo is left, and the debate is force-closed." in redo
    assert "answers again" not in redo


def test_every_heading_has_something_under_it_and_the_call_for_the_vote_is_a_line(finished):
    # Wall rejects every synthesis: a refinement is put to the vote as well
    folder = _made(finished, [sim("ada"), sim("bob", DISPUTATIO_SIM_VOTE="reject"), sim("cy")],
                   max_refinement_loops=1)
    md = (folder / "debate.md").read_text()
    headings = [i for i, line in enumerate(md.splitlines()) if line.startswith("#")]
    lines = md.splitlines()
    for at, nxt in zip(headings, headings[1:] + [len(lines)], strict=True):
        assert any(line.strip() for line in lines[at + 1:nxt]), f"empty: {lines[at]}"
    assert "_Door called the vote on its synthesis at turn 3._" in md
    assert "_Door put refinement 1 to the vote._" in md
    assert "· at most 1 refinement ·" in md


def test_the_judge_note_is_said_once_and_only_when_the_lineup_has_a_judge(home):
    _, folder = _run(home, [sim("ada"), sim("bob"), sim("cy")])
    md = (folder / "debate.md").read_text()
    assert md.count("takes no part") == 1
    assert "- **Judge:** none (the lineup's judge takes no part in this protocol)" in md
    assert "· at most 3 refinements ·" in md
    _, folder = _run(home, [sim("ada"), sim("bob"), sim("cy")], False)
    md = (folder / "debate.md").read_text()
    assert "takes no part" not in md
    assert "- **Judge:** none (the debate ran without a judge)" in md


def test_a_participant_with_no_role_is_warned_about_once_at_the_start(home):
    ran, folder = _run(home, [sim("ada"), sim("bob"), sim("cy")], True, "-q",
                       wind="ada", wall="ada", door="ada")
    said = [line for line in ran.stderr.splitlines() if "no role" in line]
    assert said == ["warning: bob and cy play no role and sit this debate out (protocol: "
                    "wind, wall and door name who plays each role)"]
    assert "\nbob and cy play no role and sit this debate out.\n" in \
        (folder / "debate.md").read_text()
    ran, _ = _run(home, [sim("ada"), sim("bob"), sim("cy")], True, "-q")
    assert "no role" not in ran.stderr
