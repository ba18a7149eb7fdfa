"""Prompts laid out for a provider's prefix cache: stable preamble, the quaestio, the transcript
in chronological order, and only then what is specific to this participant and this turn.

A cache hit needs an identical prefix, so the targets are about shared prefixes, with 3
participants × 3 reaction rounds and ~2 KB answers: each participant's next prompt starts with
at least 90 % of its previous one, and in one round any two participants' prompts share at
least 90 % of their length. The prompts are rendered exactly as the engine renders them (the
protocol's step, then ``prompts.render``)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from itertools import combinations

import pytest

from disputatio import prompts
from disputatio.protocols import disputatio as proto
from disputatio.protocols.base import Ask, Step

PEOPLE = ("ann", "bo", "cy")
QUAESTIO = "Should the billing service replace its hand-written SQL with the ORM the rest of " \
           "the codebase uses?"


@dataclass
class Ev:
    type: str
    data: dict


def answer(turn_id: str, size: int = 2048) -> str:
    """About ``size`` bytes of prose that differs for every turn."""
    words = []
    n = 0
    while sum(len(w) + 1 for w in words) < size:
        words.append(hashlib.sha256(f"{turn_id}/{n}".encode()).hexdigest()[: 3 + n % 7])
        n += 1
        if n % 12 == 0:
            words.append("\n")
    return " ".join(words)


def shared(a: str, b: str) -> int:
    """Bytes of the longest common prefix."""
    x, y = a.encode(), b.encode()
    return len(os.path.commonprefix([x, y]))


def debate(rounds: int = 3, human: list[dict] | None = None) -> dict[str, list[str]]:
    """Every debater's prompts in order, by name; the human (if any) acts after each round."""
    evs = [Ev("debate_started", {"quaestio": QUAESTIO, "rounds": rounds,
                                 "participants": list(PEOPLE), "judge": "judge",
                                 "synthesizer": "judge", "seed": 1234,
                                 "human": True if human else None})]
    out: dict[str, list[str]] = {p: [] for p in PEOPLE}
    acts = iter(human or [])
    while True:
        step = proto.next_step(proto.state(evs))
        if isinstance(step, Ask):
            evs.append(Ev("human_acted", {"key": step.key, "round": step.round, **next(acts)}))
            continue
        assert isinstance(step, Step)
        if step.phase == "respondeo":
            return out
        for t in step.turns:
            out[t.participant].append(prompts.render(t.template, t.variables))
        for t in step.turns:
            evs.append(Ev("turn_completed", {"turn_id": t.turn_id, "role": t.participant,
                                             "phase": t.phase, "round": t.round, "ok": True,
                                             "text": answer(t.turn_id)}))


def ratios(by_person: dict[str, list[str]]) -> tuple[list[float], list[float]]:
    """(next prompt vs previous of the same debater, two debaters' prompts of one round)."""
    own = [shared(a, b) / len(a.encode()) for ps in by_person.values()
           for a, b in zip(ps, ps[1:], strict=False)]
    across = [shared(a, b) / max(len(a.encode()), len(b.encode()))
              for turn in zip(*by_person.values(), strict=True)
              for a, b in combinations(turn, 2)]
    return own, across


@pytest.mark.parametrize("human", [None, [
    {"action": "agree", "participant": "bo", "strength": 2},
    {"action": "steer", "text": "Mind the migrations of the invoices table."},
    {"action": "skip"},
    {"action": "skip"}]], ids=["alone", "with-the-human"])
def test_prompts_share_their_prefixes_at_the_target_ratios(human):
    by_person = debate(rounds=3, human=human)
    assert [len(ps) for ps in by_person.values()] == [4, 4, 4]   # proposal + 3 reactions
    own, across = ratios(by_person)
    assert len(own) == 9 and len(across) == 12
    assert min(own) >= 0.90, own
    assert min(across) >= 0.90, across
    # the transcript dominates from the first reaction on: nearly everything is shared
    assert min(own[1:3]) >= 0.97


def test_what_differs_between_two_debaters_is_only_the_end():
    by_person = debate(rounds=1)
    a, b = (ps[1] for ps in list(by_person.values())[:2])
    tail_a = a.encode()[shared(a, b):].decode()
    assert tail_a.startswith("A (phase: reaction")       # "You are Participant " is shared
    assert "\n## " not in tail_a                          # nothing after "Your turn"


def test_a_transcript_only_grows_round_by_round():
    by_person = debate(rounds=3)
    for ps in by_person.values():
        for earlier, later in zip(ps[1:], ps[2:], strict=False):
            body = earlier[: earlier.index("\n\n## Your turn")]
            assert later.startswith(body)
