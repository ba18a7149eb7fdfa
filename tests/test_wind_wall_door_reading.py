"""How a Wind/Wall/Door debate reads: a contract note is a remark on the turn it judges (in
``debate.md`` it follows that turn's answer, under its heading, never the heading of the turn
before; a note on the debate's last turn closes the transcript), and counts read as English."""

from __future__ import annotations

from pathlib import Path

from support import invoke, one_path, sim, write_config


def _debate_md(home: Path, wind: dict | None = None, **settings) -> str:
    wind = wind or sim("ada", DISPUTATIO_SIM_WWD="break")   # breaks every contract
    path = write_config(home / "d.yaml", [wind, sim("bob"), sim("cy")], protocol=settings)
    ran = invoke("--config", str(path), "--protocol", "wind-wall-door", "-q", "Tabs?", cwd=home)
    assert ran.returncode in (0, 1), ran.stderr
    return (one_path(ran.stdout).parent / "debate.md").read_text()


def _section(md: str, heading_start: str) -> str:
    """The text under the first heading that starts with ``heading_start``, to the next."""
    at = md.index("\n## " + heading_start)
    end = md.find("\n## ", at + 1)
    return md[at:end if end != -1 else len(md)]


def test_a_contract_warning_follows_the_turn_it_is_about(home):
    md = _debate_md(home)
    wind = _section(md, "Wind · “What if…” · turn 1")
    assert "Some thoughts from" in wind
    assert "**Contract warning:** this answer breaks Wind's contract" in wind
    assert "Contract warning" not in _section(md, "The roles")


def test_each_refusal_follows_its_own_answer_and_the_last_closes_the_transcript(home):
    md = _debate_md(home, strict=True, max_redos=1)
    first = _section(md, "Wind · “What if…” · turn 1, round 1 —")
    redo = _section(md, "Wind · “What if…” · turn 1, round 1 (redo 1)")
    assert first.count("**Refused:**") == 1 and first.index("Some thoughts") < \
        first.index("**Refused:**")
    # the redo is the last turn (force_closed): its refusal comes after it, before the totals
    assert redo.count("**Refused:**") == 1 and redo.index("Some thoughts") < \
        redo.index("**Refused:**")
    assert "Refused" not in _section(md, "The roles")


def test_one_refinement_is_said_in_the_singular(home):
    md = _debate_md(home, sim("ada", DISPUTATIO_SIM_VOTE="reject"), max_refinement_loops=1)
    assert "- **Status:** stalemate — Wind rejected Door's synthesis after 1 refinement\n" in md
    assert "· 1 refinement · contracts as warnings" in md
    assert "1 refinements" not in md


def test_a_contract_broken_once_with_no_redo_allowed_says_once(home):
    md = _debate_md(home, strict=True, max_redos=0)
    assert "- **Status:** force_closed — Wind (ada) broke its contract once (" in md
