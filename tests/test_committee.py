"""The committee's rules, pure: state in, next step out. A small loop plays the part of app
(every turn a scripted answer, every question a scripted human), so each rule is seen deciding
what a whole meeting does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from pydantic import ValidationError

from disputatio.protocols import committee as c
from disputatio.protocols import labels
from disputatio.protocols.base import Ask, Done, Step, TurnSpec
from disputatio.protocols.committee_meeting import is_pass


@dataclass
class Ev:
    type: str
    data: dict


def started(members=("a", "b", "c"), judge: str | None = None, human=False, **settings):
    data = {"quaestio": "Tabs or spaces?", "rounds": settings.get("max_rounds", 8),
            "participants": list(members), "judge": judge, "synthesizer": judge,
            "settings": {"max_rounds": 8, "attempts": 3, **settings}}
    if human:
        data["human"] = True
    return Ev("debate_started", data)


def completed(spec: TurnSpec, ok=True, text="", failure=None, message=""):
    return Ev("turn_completed", {"turn_id": spec.turn_id, "role": spec.participant,
                                 "seat": spec.role, "phase": spec.phase, "round": spec.round,
                                 "ok": ok, "text": text, "failure": failure,
                                 "message": message})


def says(text):
    return {"ok": True, "text": text}


def fails(kind="timeout", message="no answer within 600 s"):
    return {"ok": False, "failure": kind, "message": message}


PASS = says("<PASS/>")

Answer = Callable[[TurnSpec], dict]
Human = Callable[[Ask], dict | None]


def meet(events: list, answer: Answer, human: Human | None = None, limit: int = 200):
    """Run the protocol as app does until it is Done; every step's turns and questions are
    kept (``prompts``: what each turn was shown, by turn id)."""
    steps: list[Step | Ask] = []
    for _ in range(limit):
        step = c.next_step(c.state(events))
        if isinstance(step, Done):
            return step, steps, events
        steps.append(step)
        if isinstance(step, Ask):
            acted = human(step) if human else None
            assert acted is not None, f"asked {step.key} with nobody to answer"
            events.append(Ev("human_acted", {"key": step.key, "round": step.round, **acted}))
            continue
        events += [completed(t, **answer(t)) for t in step.turns]
    raise AssertionError("the meeting never ended")


def turns_of(steps) -> list[str]:
    return [t.turn_id for s in steps if isinstance(s, Step) for t in s.turns]


def prompt(steps, turn_id: str) -> dict[str, str]:
    return next(t.variables for s in steps if isinstance(s, Step) for t in s.turns
                if t.turn_id == turn_id)


def speak_for(rounds: dict[str, int]) -> Answer:
    """Each member speaks in its first N rounds, then passes."""
    return lambda t: says(f"{t.participant} in round {t.round}") \
        if t.round <= rounds.get(t.participant, 99) else PASS


# --- passing --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["<PASS/>", "  <PASS/>\n", "\n\t<PASS/> \n\n"])
def test_a_pass_is_exactly_the_tag_whitespace_tolerated(text):
    assert is_pass(text)


@pytest.mark.parametrize("text", [
    "<PASS/> but I would add one thing", "I pass. <PASS/>", "<pass/>", "<PASS />",
    "`<PASS/>`", "PASS", "<PASS/>\n<PASS/>", "",
])
def test_anything_else_is_a_contribution(text):
    assert not is_pass(text)


def test_a_pass_with_words_keeps_the_meeting_going():
    chatty = lambda t: PASS if t.participant == "a" or t.round > 2 else \
        says("<PASS/> but one more thing")                                       # noqa: E731
    done, steps, _ = meet([started()], chatty)
    assert done.status == c.ALL_PASSED and "round 3" in done.reason


# --- termination, each reason and their order ---------------------------------------------

def test_all_passed_ends_the_meeting_in_the_round_everyone_passed():
    done, steps, _ = meet([started()], speak_for({"a": 1, "b": 1, "c": 2}))
    assert done.status == c.ALL_PASSED
    assert done.reason == "every member passed in round 3"
    assert [s.phase for s in steps] == ["round 1/8", "round 2/8", "round 3/8"]
    assert all(len(s.turns) == 3 for s in steps if isinstance(s, Step))


def test_max_rounds_ends_a_meeting_that_never_falls_silent():
    done, steps, _ = meet([started(max_rounds=3)], speak_for({}))
    assert done.status == c.MAX_ROUNDS
    assert len(turns_of(steps)) == 9


def test_max_rounds_is_checked_before_all_passed():
    done, _, _ = meet([started(max_rounds=2)], speak_for({"a": 1, "b": 1, "c": 1}))
    assert done.status == c.MAX_ROUNDS


def test_no_active_members_when_everyone_was_dropped_and_before_max_rounds():
    done, steps, events = meet([started(max_rounds=1)], lambda t: fails("auth", "401"))
    assert done.status == c.NO_ACTIVE
    assert turns_of(steps) == ["round-1/a", "round-1/b", "round-1/c"]   # auth: no retry
    assert c.ending(done, "debate.md").failed


def test_cancelled_when_the_human_closes_the_meeting_and_before_all_passed():
    close = lambda ask: {"action": "pick", "choice": c.CLOSE}                  # noqa: E731
    done, steps, _ = meet([started(human=True)], lambda t: PASS, close)
    assert done.status == c.CANCELLED
    assert [s.key for s in steps if isinstance(s, Ask)] == ["round-1"]
    assert not c.ending(done, "minutes.md").failed


def test_a_single_remaining_member_meets_on_until_it_passes():
    answer = lambda t: fails("auth") if t.participant != "a" else \
        (says("alone") if t.round < 3 else PASS)                                 # noqa: E731
    done, steps, _ = meet([started()], answer)
    assert done.status == c.ALL_PASSED
    assert [len(s.turns) for s in steps] == [3, 1, 1]


# --- what a member sees ---------------------------------------------------------------------

def test_a_member_sees_its_own_last_contribution_and_what_others_said_since_its_last_turn():
    answer = lambda t: PASS if (t.participant, t.round) == ("a", 2) or t.round > 3 \
        else says(f"{t.participant}-r{t.round}")                                 # noqa: E731
    _, steps, _ = meet([started(max_rounds=4)], answer)
    first = prompt(steps, "round-1/a")
    assert "b-r1" not in first["since"] and "opens with the question" in first["since"]
    assert "not spoken" in first["own"]
    third = prompt(steps, "round-3/a")
    assert "> a-r1" in third["own"]                     # a passed in round 2
    assert "> b-r2" in third["since"] and "> c-r2" in third["since"]
    assert "r1" not in third["since"]                   # said before a's last turn
    assert "a-r" not in third["since"]                  # its own words are not "since"
    fourth = prompt(steps, "round-4/a")
    assert "> a-r3" in fourth["own"] and "a-r1" not in fourth["own"]
    assert "> b-r3" in fourth["since"] and "b-r2" not in fourth["since"]
    assert "Participant A passed in round 2" in prompt(steps, "round-3/b")["since"]


def test_every_prompt_carries_the_pass_reminder():
    from disputatio import prompts

    _, steps, _ = meet([started()], speak_for({"a": 1, "b": 1, "c": 1}))
    for s in steps:
        for t in s.turns:
            text = prompts.render(t.template, t.variables)
            assert "answer with exactly `<PASS/>` and nothing else" in text
            assert f"round {t.round} of at most 8" in text


# --- failures: retries, then the member is dropped ------------------------------------------

def test_a_retryable_failure_is_tried_again_as_a_new_turn():
    tries: dict[str, int] = {}

    def answer(t):
        tries[t.participant] = tries.get(t.participant, 0) + 1
        if t.participant == "b" and tries["b"] <= 2:
            return fails("rate_limit", "429 slow down")
        return PASS if t.round > 1 else says("fine")

    done, steps, _ = meet([started()], answer)
    assert done.status == c.ALL_PASSED
    assert turns_of(steps)[:5] == ["round-1/a", "round-1/b", "round-1/c",
                                   "round-1/b/attempt-2", "round-1/b/attempt-3"]
    assert [s.phase for s in steps][:3] == ["round 1/8", "round 1/8, another attempt",
                                            "round 1/8, another attempt"]
    assert len(steps[3].turns) == 3 and not steps[3].notes   # b stays in the meeting


def test_after_its_attempts_a_member_is_dropped_and_everyone_is_told():
    answer = lambda t: fails("api_error", "HTTP 503") if t.participant == "b" \
        else (says("ok") if t.round == 1 else PASS)                              # noqa: E731
    done, steps, _ = meet([started()], answer)
    assert done.status == c.ALL_PASSED and "dropped: b in round 1" in done.reason
    assert turns_of(steps).count("round-1/b/attempt-3") == 1
    assert not [t for t in turns_of(steps) if t.startswith("round-2/b")]
    second = steps[3]
    assert [t.participant for t in second.turns] == ["a", "c"]
    line = "is dropped from the meeting after 3 failed attempts in round 1 (api_error: HTTP 503)."
    assert second.notes == (f"b {line}",)
    assert f"System: Participant B {line}" in prompt(steps, "round-2/a")["since"]


def test_a_failure_not_worth_retrying_drops_at_once_and_attempts_are_a_setting():
    auth = lambda t: fails("auth", "401") if t.participant == "c" else \
        (says("ok") if t.round == 1 else PASS)                                   # noqa: E731
    _, steps, _ = meet([started()], auth)
    assert not [t for t in turns_of(steps) if t.startswith("round-1/c/")]
    once = lambda t: fails() if t.participant == "c" else PASS                   # noqa: E731
    _, steps, _ = meet([started(attempts=1)], once)
    assert turns_of(steps) == ["round-1/a", "round-1/b", "round-1/c"]


# --- the human in the loop ------------------------------------------------------------------

def test_a_steer_reopens_a_meeting_where_everyone_had_passed():
    answers = iter([{"action": "skip"}, {"action": "steer", "text": "Think of the CI"},
                    {"action": "skip"}, {"action": "skip"}])
    speak = lambda t: says(f"{t.participant} on CI") if t.round == 3 and t.participant == "a" \
        else (says("first") if t.round == 1 else PASS)                           # noqa: E731
    done, steps, _ = meet([started(human=True)], speak, lambda ask: next(answers))
    asks = [s for s in steps if isinstance(s, Ask)]
    assert [a.key for a in asks] == ["round-1", "round-2", "round-3", "round-4"]
    assert asks[1].title == "Round 2 of at most 8 is over: every member passed"
    assert done.status == c.ALL_PASSED and done.reason == "every member passed in round 4"
    assert "Think of the CI" in prompt(steps, "round-3/b")["since"]
    assert "Think of the CI" not in prompt(steps, "round-2/b")["since"]
    assert "Think of the CI" not in prompt(steps, "round-4/b")["since"]   # seen already


def test_without_a_steer_the_same_meeting_ends_all_passed():
    done, steps, _ = meet([started(human=True)], lambda t: says("x") if t.round == 1 else PASS,
                          lambda ask: {"action": "agree", "participant": "a", "strength": 2})
    assert done.status == c.ALL_PASSED and done.reason == "every member passed in round 2"
    assert "agrees with Participant A" in prompt(steps, "round-2/b")["since"]


def test_at_the_last_round_the_human_can_no_longer_steer_or_close():
    asks: list[Ask] = []
    meet([started(human=True, max_rounds=2)], speak_for({}),
         lambda ask: asks.append(ask) or {"action": "skip"})
    assert asks[0].choices == ("agree", "skip", "steer", "pick")
    assert asks[0].options == (c.CLOSE,)
    assert asks[-1].choices == ("agree", "skip") and asks[-1].options == ()


# --- resume ---------------------------------------------------------------------------------

def test_resume_gives_the_members_dropped_last_another_attempt():
    answer = lambda t: says("early") if t.round == 1 else fails("auth", "401")  # noqa: E731
    done, _, events = meet([started(attempts=2)], answer)
    assert done.status == c.NO_ACTIVE
    again = c.retry(c.state(events), done)
    assert again == ["round-2/a", "round-2/b", "round-2/c"]
    events.append(Ev("resumed", {"retry": again}))
    step = c.next_step(c.state(events))
    assert [t.turn_id for t in step.turns] == again


def test_resume_after_retryable_drops_runs_their_last_attempt_again():
    done, _, events = meet([started(attempts=2)], lambda t: fails("timeout"))
    assert c.retry(c.state(events), done) == [f"round-1/{p}/attempt-2" for p in "abc"]


def test_a_meeting_that_ended_as_it_should_has_nothing_to_resume():
    done, _, events = meet([started()], lambda t: PASS)
    assert c.retry(c.state(events), done) is None


def test_an_interrupted_turn_runs_again_and_a_pending_retry_is_picked_up():
    events = [started()]
    first = c.next_step(c.state(events))
    events += [completed(first.turns[0], ok=True, text="a says"),
               completed(first.turns[1], **fails("timeout"))]
    # the debate stopped here: c never finished, b has attempts left
    step = c.next_step(c.state(events))
    assert [t.turn_id for t in step.turns] == ["round-1/b/attempt-2", "round-1/c"]


# --- the judge ------------------------------------------------------------------------------

RULED = 'Spaces.\n\n```json\n{"status": "resolved", "findings": []}\n```\n'


def test_with_a_judge_the_transcript_is_ruled_on_after_the_meeting():
    events = [started(judge="judge")]
    done, steps, events = meet(events, lambda t: (
        says(RULED) if t.role == "judge" else
        says("# Report") if t.role == "synthesizer" else
        says(f"{t.participant} prefers spaces") if t.round == 1 else PASS))
    assert done.status == "resolved"
    assert done.reason == "the meeting ended: every member passed in round 2"
    ruling = next(t for s in steps for t in s.turns if t.phase == "respondeo")
    record = ruling.variables["transcript"]
    assert "### Round 1" in record and "#### Participant B, round 1\n\n> b prefers spaces" in record
    assert "- Participant C passed in round 2." in record
    assert [t.phase for s in steps for t in s.turns][-2:] == ["respondeo", "redactio"]


def test_a_judge_who_fails_stops_the_meeting_and_resume_asks_it_again():
    done, _, events = meet([started(judge="judge")], lambda t: fails("timeout")
                           if t.role == "judge" else PASS)
    assert done.status == "failed" and c.ending(done, "x").failed
    assert c.retry(c.state(events), done) == ["respondeo-1"]


# --- settings -------------------------------------------------------------------------------

def test_settings_defaults_cap_and_what_rounds_means():
    assert c.Config.model_validate({}).max_rounds == 8
    assert c.Config.model_validate({"max_rounds": 16}).max_rounds == 16
    assert c.Config.ROUNDS_FLAG == "max_rounds"                       # what --rounds sets
    with pytest.raises(ValidationError, match="less than or equal to 16"):
        c.Config.model_validate({"max_rounds": 17})
    for stray in ({"rounds": 2}, {"max_round": 3}):                   # no silent key
        with pytest.raises(ValidationError, match="extra"):
            c.Config.model_validate(stray)
    recorded = c.started(c.Config(max_rounds=4, attempts=2))
    assert recorded == {"rounds": 4, "settings": {"max_rounds": 4, "attempts": 2}}


@pytest.mark.parametrize("text,status", [
    ("STATUS: RESOLVED\n\nSpaces.", "UNCLEAR"),   # a sentence is never the verdict
    ("**Status:** needs input\n1. Which CI?", "UNCLEAR"),
    ("Spaces, as agreed.\n\n```json\n{\"status\": \"needs_input\", \"questions\": [\"?\"]}\n```\n",
     "NEEDS_INPUT"),
    ("Prose.\n```json\n{\n  \"status\": \"resolved\",\n  \"findings\": []\n}\n```", "RESOLVED"),
    ("I think everyone made good points.", "UNCLEAR"),
    ("status is resolved, as json says: \"status\": \"resolved\"", "UNCLEAR"),
])
def test_a_ruling_is_read_from_its_findings_block_never_from_a_status_line(text, status):
    assert c.verdict(text) == status


def test_an_unreadable_ruling_is_asked_again_once_then_unclear():
    done, steps, events = meet([started(judge="judge")], lambda t: (
        says("STATUS: RESOLVED\n\nAll good.") if t.role == "judge" else PASS))
    assert done.status == "unclear"
    assert turns_of(steps)[-2:] == ["respondeo-1", "respondeo-1/retry"]
    again = prompt(steps, "respondeo-1/retry")["again"]
    assert "no fenced ```json block" in again and "> STATUS: RESOLVED" in again
    fixed, steps, _ = meet([started(judge="judge")], lambda t: (
        says(RULED) if t.turn_id.endswith("/retry") else says("no block")
        if t.role == "judge" else says("# Report") if t.role == "synthesizer" else PASS))
    assert fixed.status == "resolved" and turns_of(steps)[-1] == "redactio-1"


def test_agents_see_members_by_their_labels_only_the_judge_in_its_own_order():
    events = [started(members=("claude", "codex", "gemini"), judge="judge")]
    events[0].data.update(labels={"claude": "Participant A", "codex": "Participant B",
                                  "gemini": "Participant C"}, seed=7)
    _, steps, _ = meet(events, lambda t: says(RULED) if t.role == "judge" else
                       says("# Report") if t.role == "synthesizer" else
                       says(f"view {t.round}") if t.round == 1 else PASS)
    for s in steps:
        for t in s.turns:
            shown = "\n".join(t.variables.values())
            assert not {"claude", "codex", "gemini"} & set(shown.replace(",", " ").split()), t
    assert prompt(steps, "round-1/codex")["label"] == "Participant B"
    ruling = next(t for s in steps for t in s.turns if t.phase == "respondeo")
    record = ruling.variables["transcript"]
    for rnd in (1, 2):
        block = record.split(f"### Round {rnd}\n", 1)[1].split("### Round", 1)[0]
        order = [x for x in ("Participant A", "Participant B", "Participant C")
                 if x in block]
        heard = sorted(order, key=block.index)
        assert heard == labels.shuffled(["Participant A", "Participant B", "Participant C"],
                                        7, "judge", f"round-{rnd}")


def test_a_drop_in_the_last_round_is_told_as_the_judge_begins():
    answer = lambda t: says(RULED) if t.role == "judge" else \
        says("# Report") if t.role == "synthesizer" else \
        fails("auth", "401") if t.participant == "c" and t.round == 2 else \
        says("x") if t.round == 1 else PASS                                      # noqa: E731
    done, steps, _ = meet([started(judge="judge")], answer)
    assert done.status == "resolved" and "dropped: c in round 2" in done.reason
    ruling = next(s for s in steps if s.phase == "respondeo")
    assert ruling.notes == ("c is dropped from the meeting after a failed attempt in round 2 "
                            "(auth: 401).",)
