"""The human in the loop, as the use cases see it: a protocol's question goes to the context's
face, the answer is a ledger event the next prompts and debate.md carry, a human who leaves
stops the debate resumably, and a human debate goes on only with someone to ask."""

from __future__ import annotations

import pytest

from disputatio import app, config, ledger
from disputatio.context import RunContext
from disputatio.events import HumanActed
from disputatio.outcome import EXIT_INTERRUPTED, EXIT_OK, UsageError
from disputatio.protocols.base import Ask
from support import sim, write_config


class Scripted:
    """A human who answers from a list, noting every question."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.asked: list[Ask] = []

    def __call__(self, ask: Ask) -> HumanActed | None:
        self.asked.append(ask)
        make = self.answers.pop(0) if self.answers else None
        return make(ask) if make else None


def agree(who: str, strength: int = 2):
    return lambda ask: HumanActed(key=ask.key, round=ask.round, action="agree",
                                  participant=who, strength=strength)


def steer(text: str):
    return lambda ask: HumanActed(key=ask.key, round=ask.round, action="steer", text=text)


def cfg(tmp_path, rounds: int = 1):
    c, _ = config.load(write_config(tmp_path / "d.yaml", [sim("ada"), sim("bob")],
                                    rounds=rounds))
    return c


def debate_of(home):
    return next(p for p in (home / ".debate").iterdir() if p.is_dir())


def prompts(debate, turn: str) -> str:
    return "".join(p.read_text() for p in sorted((debate / "raw").glob(f"*{turn}*prompt*")))


def test_the_human_is_asked_after_each_round_and_heard_in_the_next(home, tmp_path):
    human = Scripted(agree("bob", 3), steer("Mind the migration <script>"))
    out = app.run("q", cfg(tmp_path), app.RunOptions(quiet=True, human=True), base=home,
                  context=RunContext(human=human))
    assert out.code == EXIT_OK
    assert [a.key for a in human.asked] == ["round-0", "round-1"]
    assert human.asked[0].participants == ("ada", "bob")
    assert {who for who, _ in human.asked[0].latest} == {"ada", "bob"}
    debate = debate_of(home)
    kinds = [e.type for e in ledger.load(debate / "events.jsonl")]
    assert kinds.count("human_acted") == 2
    # the first action precedes the reactions; the steer precedes the ruling
    first_reaction = next(i for i, e in enumerate(ledger.load(debate / "events.jsonl"))
                          if e.type == "turn_started" and e.data["phase"] == "reaction")
    assert kinds.index("human_acted") < first_reaction
    md = (debate / "debate.md").read_text()
    assert "Agrees with bob (strength 3 of 3)." in md
    assert "> Mind the migration <script>" in md


def test_what_the_human_said_reaches_the_agents(home, tmp_path):
    human = Scripted(agree("bob", 3), steer("Mind the migration"))
    app.run("q", cfg(tmp_path), app.RunOptions(quiet=True, human=True), base=home,
            context=RunContext(human=human))
    debate = debate_of(home)
    reaction = prompts(debate, "reaction-1-ada")
    assert "the human agrees with Participant B (strength 3 of 3)" in reaction
    assert "Mind the migration" not in reaction        # said after that round
    judge = prompts(debate, "respondeo-1")
    assert "> Mind the migration" in judge


def test_a_human_who_leaves_stops_the_debate_and_resume_asks_again(home, tmp_path):
    first = Scripted(agree("ada", 1))          # answers once, then leaves
    out = app.run("q", cfg(tmp_path), app.RunOptions(quiet=True, human=True), base=home,
                  context=RunContext(human=first))
    assert out.code == EXIT_INTERRUPTED
    assert "disputatio resume --human" in out.message
    debate = debate_of(home)
    with pytest.raises(UsageError, match="human in the loop"):
        app.resume(debate, quiet=True)
    again = Scripted(steer("go on"))
    out = app.resume(debate, quiet=True, context=RunContext(human=again))
    assert out.code == EXIT_OK
    assert [a.key for a in again.asked] == ["round-1"]      # round-0 is in the ledger already
    assert app.verify(debate).code == EXIT_OK


def test_without_a_face_human_is_refused_before_anything_is_made(home, tmp_path):
    with pytest.raises(UsageError, match="--human needs a terminal"):
        app.run("q", cfg(tmp_path), app.RunOptions(quiet=True, human=True), base=home)
    assert not (home / ".debate").exists()


def test_a_debate_without_the_human_never_asks(home, tmp_path):
    human = Scripted()
    out = app.run("q", cfg(tmp_path), app.RunOptions(quiet=True), base=home,
                  context=RunContext(human=human))
    assert out.code == EXIT_OK and human.asked == []
