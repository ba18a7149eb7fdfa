"""``--human`` as a person at a terminal meets it: disputatio runs on a real pseudo-terminal
(stdin and stderr are its slave side and its controlling terminal, so Ctrl-C is the line
discipline's SIGINT; stdout is a pipe, as in ``$(disputatio …)``), the test reads the questions
from the master side with deadlines and types the answers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from disputatio import ledger
from support import run_cli, sim, write_config
from support.terminal import PROMPT, Terminal

pytestmark = pytest.mark.process


@pytest.fixture
def terminal(home):
    opened: list[Terminal] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Terminal:
        t = Terminal(list(args), home, env)
        opened.append(t)
        return t

    yield start
    for t in opened:
        t.close()


def lineup(home: Path, rounds: int = 1) -> str:
    return str(write_config(home / "d.yaml", [sim("ada"), sim("bob")], rounds=rounds))


def the_debate(home: Path) -> Path:
    (debate,) = (home / ".debate").glob("debate-*")
    return debate


def human_events(debate: Path) -> list[dict]:
    return [e.data for e in ledger.load(debate / "events.jsonl") if e.type == "human_acted"]


def test_a_whole_debate_answered_at_the_terminal(home, terminal):
    t = terminal("run", "Ship it?", "--config", lineup(home), "--human", "-q")
    shown = t.expect(PROMPT)
    assert "== The proposals are in ==" in shown
    assert re.search(r"1 ada: .*Proposal|1 ada: .*simulated", shown), shown
    assert "2 bob: " in shown and "a N [1-3] agree" in shown
    t.type("a 2 3")
    assert "recorded: agree with bob (strength 3 of 3)" in t.expect(PROMPT)
    t.type("s")                      # a steer over several lines
    t.expect("| ")
    t.type("Mind the migration")
    t.expect("| ")
    t.type("and the <b>rollback</b>")
    t.expect("| ")
    t.type("")
    t.expect("recorded: steer")
    code, out = t.finish()
    assert code == 0, t.screen
    debate = the_debate(home)
    assert Path(out.strip()) == debate / "final-report.md"
    assert human_events(debate) == [
        {"key": "round-0", "round": 0, "action": "agree", "participant": "bob", "strength": 3,
         "text": ""},
        {"key": "round-1", "round": 1, "action": "steer",
         "text": "Mind the migration\nand the <b>rollback</b>"}]
    md = (debate / "debate.md").read_text()
    assert "Agrees with bob (strength 3 of 3)." in md
    assert "> Mind the migration\n> and the <b>rollback</b>" in md
    assert run_cli("verify", "--debate", str(debate), cwd=home).returncode == 0


def test_invalid_input_is_asked_again_with_a_hint(home, terminal):
    t = terminal("run", "Ship it?", "--config", lineup(home, rounds=0), "--human", "-q")
    t.expect(PROMPT)
    for wrong, hint in [("maybe", "'maybe' is not a choice"),
                        ("a 7", "no participant 7; give one of: 1 ada, 2 bob"),
                        ("a ada 9", "the strength is 1, 2 or 3, not 9"),
                        ("p 1", "pick is not a choice here"),
                        ("", "type one of: a N [1-3] agree")]:
        t.type(wrong)
        assert hint in t.expect(PROMPT)
    t.type("k")
    t.expect("recorded: skip")
    code, _ = t.finish()
    assert code == 0, t.screen
    assert [h["action"] for h in human_events(the_debate(home))] == ["skip"]


def test_ctrl_c_at_the_question_stops_and_resume_asks_again(home, terminal):
    t = terminal("run", "Ship it?", "--config", lineup(home), "--human", "-q")
    t.expect(PROMPT)
    t.type("a ada 1")
    t.expect("recorded: agree with ada")
    t.expect(PROMPT)                 # round 1's question
    t.press(b"\x03")                 # Ctrl-C, through the terminal's line discipline
    code, out = t.finish(timeout=30)
    assert code == 130, t.screen
    assert "interrupted; finish it with: disputatio resume --human" in t.screen
    assert "Traceback" not in t.screen
    debate = the_debate(home)
    events = ledger.load(debate / "events.jsonl")
    assert events[-1].type == "interrupted"
    assert [h["key"] for h in human_events(debate)] == ["round-0"]

    again = terminal("resume", "--debate", str(debate), "--human", "-q")
    shown = again.expect(PROMPT)
    assert "== Reaction round 1 is over ==" in shown     # round 0 was answered already
    again.type("steer keep it small")
    again.expect("recorded: steer: keep it small")
    code, out = again.finish()
    assert code == 0, again.screen
    assert [h["key"] for h in human_events(debate)] == ["round-0", "round-1"]
    assert Path(out.strip()).name == "final-report.md"


def test_ctrl_d_leaves_like_ctrl_c(home, terminal):
    t = terminal("run", "Ship it?", "--config", lineup(home, rounds=0), "--human", "-q")
    t.expect(PROMPT)
    t.press(b"\x04")                 # end of input on an empty line
    code, _ = t.finish(timeout=30)
    assert code == 130, t.screen
    assert human_events(the_debate(home)) == []


def test_the_progress_table_gives_way_to_the_question(home, terminal):
    """Without -q the live table runs on the same terminal: it stops for the question and
    comes back after the answer."""
    t = terminal("run", "Ship it?", "--config", lineup(home, rounds=0), "--human")
    before = t.expect(PROMPT)
    assert "phase: proposals" in before
    t.type("a 1")
    t.expect("recorded: agree with ada (strength 2 of 3)")
    assert "┃ participant" in t.expect("│ judge ")   # the table again, with the judge's turn
    code, _ = t.finish()
    assert code == 0, t.screen


def test_the_human_picks_who_speaks_next(home, terminal):
    """Wind/Wall/Door in the mediated order with no mediator: each turn's speaker is the
    human's pick, typed as a number, a name or ``p N``."""
    cfg = write_config(home / "d.yaml", [sim("ada"), sim("bob"), sim("cy")],
                       protocol={"order": "mediated", "max_turns": 3, "max_rounds": 1})
    t = terminal("run", "Ship it?", "--config", str(cfg), "--protocol", "wind-wall-door",
                 "--human", "-q")
    for answer, picked in (("2", "Wall"), ("wind", "Wind"), ("p 3", "Door")):
        assert "options: 1 Wind, 2 Wall, 3 Door" in t.expect(PROMPT)
        t.type(answer)
        t.expect(f"recorded: pick {picked}")
    code, _ = t.finish()
    assert code == 0, t.screen
    debate = the_debate(home)
    assert [(h["action"], h["choice"]) for h in human_events(debate)] == [
        ("pick", "Wall"), ("pick", "Wind"), ("pick", "Door")]
    spoke = [e.data["role"] for e in ledger.load(debate / "events.jsonl")
             if e.type == "turn_started"]
    assert spoke[:3] == ["bob", "ada", "cy"]


def test_without_a_terminal_human_is_a_usage_error(home):
    r = run_cli("run", "Ship it?", "--config", lineup(home), "--human", cwd=home)
    assert r.returncode == 2
    assert r.stderr == ("error: --human needs a terminal: stdin and stderr must be one (stdout "
                        "may be piped)\n")
    assert r.stdout == ""
    assert not (home / ".debate").exists()
