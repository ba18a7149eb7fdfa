"""The disputatio protocol's policy as it declares it (pure), and app running a protocol it has
never heard of through the same interface: the house names no phase, role or file of its own."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from disputatio import app, config, ledger, protocols
from disputatio.events import AnswersGiven, FinalizeRequested
from disputatio.protocols import disputatio as proto
from disputatio.protocols.base import Done, Refused, Step
from support import sim, write_config


@dataclass
class Ev:
    type: str
    data: dict


def started(rounds=1, participants=("a", "b", "c")) -> Ev:
    return Ev("debate_started", {"quaestio": "Q?", "rounds": rounds,
                                 "participants": list(participants), "judge": "judge",
                                 "synthesizer": "judge"})


def done(turn_id, role, phase, rnd=0, ok=True, text="answer", failure=None) -> Ev:
    return Ev("turn_completed", {"turn_id": turn_id, "role": role, "phase": phase,
                                 "round": rnd, "ok": ok, "text": text, "failure": failure,
                                 "message": ""})


NEEDS = '```json\n{"status": "needs_input", "questions": ["Which?"]}\n```'


def judged(ruling: str = NEEDS, synthesizer: str = "judge"):
    base = started(rounds=0, participants=("a", "b"))
    base.data["synthesizer"] = synthesizer
    base.data["settings"] = {"judging": proto.JUDGING}
    return proto.state([base, done("proposal/a", "a", "proposal"),
                        done("proposal/b", "b", "proposal"),
                        done("respondeo-1", "judge", "respondeo", 1, text=ruling)])


def test_places_the_judge_without_a_checkout_and_answers_bring_back_only_judge_and_drafter():
    s = judged(synthesizer="a")
    full = proto.places(s, None)
    assert full.names == ("a", "b", "a", "judge") and full.no_repo == {"judge"}
    again = proto.places(s, FinalizeRequested())
    assert again.names == ("a", "judge") and again.no_repo == {"judge"}
    # answers may send the debaters back to argue them: their checkouts are made again
    answered = proto.places(s, AnswersGiven(answers="x"))
    assert answered.names == ("a", "b", "a", "judge")
    alone = proto.places(judged(), FinalizeRequested())
    assert alone.names == ("judge",) and alone.no_repo == frozenset()


def test_seats_budget_the_judge_and_a_separate_synthesizer_only():
    assert [(x.name, x.key, x.budgeted) for x in proto.seats(judged(synthesizer="s"))] == \
        [("judge", "judge", True), ("s", "synthesizer", True)]
    assert [x.name for x in proto.seats(judged())] == ["judge"]


def test_the_judge_s_turns_release_the_debaters_but_not_the_drafter():
    s = judged(synthesizer="a")
    assert proto.released(s, Step("respondeo", ())) == ["b"]
    assert proto.released(s, Step("proposals", ())) == []


def test_resume_retries_only_what_the_debate_stopped_on():
    s = proto.state([started(participants=("a", "b", "c")),
                     done("proposal/a", "a", "proposal"),
                     done("proposal/b", "b", "proposal", ok=False, failure="timeout"),
                     done("proposal/c", "c", "proposal", ok=False, failure="auth")])
    stop = proto.next_step(s)
    assert isinstance(stop, Done) and stop.status == "aborted"
    assert proto.retry(s, stop) == ["proposal/b", "proposal/c"]
    assert proto.retry(s, Done("needs_input")) is None


def test_continue_and_finalize_are_accepted_or_refused_with_the_reason():
    asking = judged()
    assert proto.accept(asking, "continue", "yes") == AnswersGiven(answers="yes")
    with pytest.raises(Refused, match="cannot finalize: the judge ruled NEEDS_INPUT"):
        proto.accept(asking, "finalize")
    settled = judged('Done.\n```json\n{"status": "resolved"}\n```')
    assert proto.accept(settled, "finalize") == FinalizeRequested()
    with pytest.raises(Refused, match="already resolved; run `disputatio finalize`"):
        proto.accept(settled, "continue", "more")


def test_the_end_maps_to_failure_and_message():
    assert proto.ending(Done("aborted", "why"), "p") == proto.Ending(True, "why")
    assert proto.ending(Done("resolved"), "p") == proto.Ending(False, "")
    assert "then answer with" in proto.ending(Done("needs_input"), "r.md").message


def test_settings_come_from_the_protocol_key_and_the_flag_wins(home, tmp_path):
    path = write_config(tmp_path / "d.yaml", [sim("a"), sim("b")], protocol={"rounds": 0})
    cfg, _ = config.load(path)
    out = app.run("q", cfg, app.RunOptions(quiet=True), base=home)
    evs = ledger.load(out.path.parent / "events.jsonl")
    assert evs[0].data["rounds"] == 0
    assert not [e for e in evs if e.type == "turn_started" and e.data["phase"] == "reaction"]
    out = app.run("q", cfg, app.RunOptions(quiet=True, rounds=1), base=home)
    assert ledger.load(out.path.parent / "events.jsonl")[0].data["rounds"] == 1


@pytest.mark.parametrize("settings,said", [({"rounds": 21}, "protocol.rounds"),
                                           ({"roundz": 1}, "protocol.roundz")])
def test_wrong_protocol_settings_are_one_usage_error(home, tmp_path, settings, said):
    cfg, _ = config.load(write_config(tmp_path / "d.yaml", [sim("a"), sim("b")],
                                      protocol=settings))
    with pytest.raises(app.UsageError, match=said):
        app.run("q", cfg, app.RunOptions(quiet=True), base=home)
    assert not (home / ".debate").exists()


def test_app_runs_a_protocol_it_does_not_know(home, tmp_path, monkeypatch):
    monkeypatch.setitem(protocols.KNOWN, "toy", "toy_protocol")
    cfg, _ = config.load(write_config(tmp_path / "d.yaml", [sim("a"), sim("b")]))
    out = app.run("q", cfg, app.RunOptions(quiet=True), base=home, protocol="toy")
    assert (out.code, out.status, out.path.name) == (0, "noted", "notes.md")
    assert out.message.startswith("notes in ")
    debate = out.path.parent
    assert (debate / "notes.md").read_text().startswith("- a: ")
    assert "## Note — a" in (debate / "debate.md").read_text()
    with pytest.raises(app.UsageError, match="notes take no continue"):
        app.continue_("answers", debate)
    again = app.resume(debate, quiet=True)
    assert (again.code, again.path) == (0, debate / "notes.md")
