"""The committee protocol: parallel rounds until every member passes; then the judge, if any.

The question opens the meeting. Every round, every active member answers in parallel, seeing
its own last contribution and what the others said since its own last turn; answering exactly
``<PASS/>`` (whitespace around it tolerated) sits a round out, and every prompt says so. Before
each round, first match wins: the human in the loop closed the meeting (``cancelled``), every
member was dropped (``no-active-members``), ``max_rounds`` were held (``max-rounds``), every
active member passed in the last round and the human did not steer (``all-passed``).

A turn that fails in a way worth trying again (a timeout, a rate limit, an API error) is tried
again as a new turn, up to ``attempts`` tries in a round; a member whose turn still fails, or
fails otherwise, is dropped for the rest of the meeting, and everyone is told. With a judge the
meeting's transcript is ruled on as in the disputatio protocol (respondeo, answers, redactio);
either way ``minutes.md`` records where every member stood when the meeting ended.

Ctrl-C or SIGTERM (the run context's cancel) interrupts the meeting like any debate, to be
finished with ``disputatio resume``; ``cancelled`` is the human closing it for good.

Here are its settings, what runs next and its policy; the meeting as the ledger has it (rounds,
drops, why it ended, its transcript) is ``committee_meeting``'s, how it reads
``committee_minutes``'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from disputatio.events import EventData
from disputatio.protocols import committee_minutes, judging, labels
from disputatio.protocols import disputatio as judged
from disputatio.protocols.base import (
    ANSWERS_BUDGET,
    QUAESTIO_BUDGET,
    RESOLVED,
    RULING_BUDGET,
    TRANSCRIPT_BUDGET,
    Ask,
    Done,
    Ending,
    Places,
    Presentation,
    SeatSpec,
    Step,
    Turn,
    TurnSpec,
    contribution,
    foreign,
    human_notes,
    ruling_message,
)
from disputatio.protocols.committee_meeting import (
    ALL_PASSED,
    CANCELLED,
    CLOSE,
    MAX_ROUNDS,
    NO_ACTIVE,
    PHASE,
    Meeting,
    State,
    attempt_id,
    describe,
    drop_line,
    ended,
    listed,
    meeting,
    quoted,
    rounds,
    seat_lines,
    transcript,
    verdict,
)
from disputatio.protocols.respondeo import RETRY, again
from disputatio.text import fair_caps

# the judge rules alone (a jury does not sit): recusal has no other judge to turn to
SEATED_JUDGES = "judge"


class Config(BaseModel):
    """``max_rounds`` (default 8, hard cap 16) and ``attempts`` per member and round for a
    retryable failure (default 3), under the lineup's ``protocol:`` key. ``--rounds N`` sets
    ``max_rounds``; a ``rounds`` key is refused, and the lineup's top-level ``rounds`` (the
    disputatio protocol's reaction rounds) is not handed to a committee."""

    # taken as written, like the rest of the lineup: "3" or true is no count
    model_config = ConfigDict(extra="forbid", strict=True)
    ROUNDS_FLAG: ClassVar[str] = "max_rounds"   # the setting --rounds sets

    max_rounds: int = Field(default=8, ge=1, le=16)
    attempts: int = Field(default=3, ge=1, le=5)


def started(config: BaseModel) -> dict[str, Any]:
    assert isinstance(config, Config)
    return {"rounds": config.max_rounds,
            "settings": {"max_rounds": config.max_rounds, "attempts": config.attempts}}


def state(events: Iterable[Any]) -> State:
    return State.from_events(events)


# --- what runs next --------------------------------------------------------------------------

def next_step(s: State) -> Step | Ask | Done:
    m = meeting(s)
    if m.end is None and m.asking:
        return _ask(s, m)
    if m.end is None:
        return _round(s, m)
    if m.end == NO_ACTIVE:
        return Done(NO_ACTIVE, describe(s, m) + "; once the cause is fixed, `disputatio "
                    "resume` gives those dropped last another attempt")
    if s.judge is None:
        return Done(m.end, describe(s, m))
    return _judge(s, ended(s, m))


def _round(s: State, m: Meeting) -> Step:
    """The pending seats of the open round; the drops of the round before are told as it
    begins, unless the human was told them at the question between the two."""
    rnd, pending = m.held, m.pending()
    first = all(x.attempt == 1 for x in pending)
    notes = tuple(drop_line(s, x) for x in m.rounds[-2].values()
                  if x.kind == "dropped") if first and rnd > 1 and not s.asks_human else ()
    turns = tuple(TurnSpec(attempt_id(rnd, x.member, x.attempt), x.member, "participant",
                           PHASE, rnd, "committee", _prompt(s, m, x.member))
                  for x in pending)
    label = f"round {rnd}/{s.max_rounds}" + ("" if first else ", another attempt")
    return Step(label, turns, notes)


def _ask(s: State, m: Meeting) -> Ask:
    """After each round: agree with a member, skip, steer (which reopens a meeting where
    everyone passed), or close the meeting; at the last round only agree or skip. Who was
    dropped in the round, and why, is told first, and then who is still in the meeting."""
    rnd = m.held
    seats = [x for x in m.rounds[-1].values() if x.kind in ("spoke", "passed")]
    last = rnd >= s.max_rounds
    passed = all(x.kind == "passed" for x in seats)
    title = (f"Round {rnd} of at most {s.max_rounds} is over"
             + (": every member passed" if passed else ""))
    notes = tuple(drop_line(s, x) for x in m.rounds[-1].values() if x.kind == "dropped")
    if m.dropped:
        notes += (f"Still in the meeting: {listed([x.member for x in seats])}.",)
    return Ask(f"round-{rnd}", rnd, title,
               choices=("agree", "skip") if last else ("agree", "skip", "steer", "pick"),
               participants=tuple(x.member for x in seats),
               options=() if last else (CLOSE,),
               latest=tuple((x.member, "(passes: nothing new to add)" if x.kind == "passed"
                             else x.turn.text) for x in seats if x.turn is not None),
               notes=notes)


def _prompt(s: State, m: Meeting, member: str) -> dict[str, str]:
    """What a member is shown: its own last contribution, and what the others said (or did)
    since its own last turn, every member by its label, the whole within the budget."""
    rnd, names = m.held, labels.of(s.started)
    took = [r for r in range(1, rnd) if m.rounds[r - 1].get(member) is not None]
    since = took[-1] if took else 0
    spoke = [r for r in took if m.rounds[r - 1][member].kind == "spoke"]
    own = m.rounds[spoke[-1] - 1][member].turn if spoke else None
    entries = [(r, x) for r in range(since, rnd) if r for x in m.rounds[r - 1].values()
               if x.member != member]
    caps = fair_caps([len(x.turn.text) if x.kind == "spoke" and x.turn else 0
                      for _, x in entries] + [len(own.text) if own else 0], TRANSCRIPT_BUDGET)
    lines = []
    for (r, x), cap in zip(entries, caps, strict=False):
        lines += seat_lines(s, r, x, cap, "###", names)
    notes = human_notes((h for h in s.human if since <= h.round < rnd), names)
    if notes:
        lines += ["### The human in the loop", "", notes, ""]
    return {"quaestio": foreign(s.quaestio, QUAESTIO_BUDGET), "label": names[member],
            "round": str(rnd), "max_rounds": str(s.max_rounds),
            "own": contribution(own, caps[-1]) if own else
            "(none yet: you have not spoken in this meeting)",
            "since": "\n".join(lines).strip() or
            ("(nothing yet: the meeting opens with the question)" if rnd == 1 else
             "(nothing new)")}


# --- the judge: rulings on the meeting, then the report ------------------------------------

def _ruled(s: State, rid: str) -> Turn | None:
    """Ruling ``rid`` as it stands: its retry when it was asked again."""
    return s.turns.get(f"{rid}/{RETRY}") or s.turns.get(rid)


def _judge(s: State, reason: str) -> Step | Done:
    """As in the disputatio protocol: a ruling in findings (an unreadable one asked again once,
    ``respondeo-<k>/retry``), another after each ``disputatio continue``, a report once
    resolved; with the committee's own prompts."""
    k = len(s.answers) + 1
    rid = judged.respondeo_id(k)
    m = meeting(s)
    variables = {"quaestio": foreign(s.quaestio, QUAESTIO_BUDGET),
                 "transcript": transcript(s, m, reader=s.judge), "again": ""}
    template = "committee_continuation" if k > 1 else "committee_respondeo"
    if k > 1:
        variables["ruling"] = contribution(_ruled(s, judged.respondeo_id(k - 1)), RULING_BUDGET)
        variables["answers"] = "\n\n".join(
            f"Answer {i}:\n\n{foreign(a, ANSWERS_BUDGET // len(s.answers))}"
            for i, a in enumerate(s.answers, start=1))
    if rid not in s.turns:
        notes = tuple(drop_line(s, x) for x in m.rounds[-1].values()
                      if x.kind == "dropped") if k == 1 and m.rounds else ()
        if s.jury and k == 1:
            notes += ("the lineup's jury does not sit in a committee: its judge rules alone",)
        return Step("respondeo", (TurnSpec(rid, s.judge or "", "judge", "respondeo", k,
                                           template, variables),), notes)
    ruling = s.turns[rid]
    read = judging.read(ruling.text, quoted=quoted(s)) if ruling.ok else None
    if read is not None and read.answer is None and f"{rid}/{RETRY}" not in s.turns:
        variables["again"] = again(ruling, read.error)
        return Step("respondeo", (TurnSpec(f"{rid}/{RETRY}", s.judge or "", "judge",
                                           "respondeo", k, template, variables),))
    ruling = s.turns.get(f"{rid}/{RETRY}", ruling)
    if not ruling.ok:
        return Done("failed", f"the judge gave no ruling ({ruling.failure}: {ruling.message});"
                              " once fixed, `disputatio resume` asks it again")
    status = verdict(ruling.text, quoted(s))
    if status != RESOLVED:
        return Done(status.lower(), reason)
    did = judged.redactio_id(k, s.finalizes)
    draft = s.turns.get(did)
    if draft is None:
        variables["ruling"] = foreign(ruling.text, RULING_BUDGET)
        variables["transcript"] = transcript(s, m, reader=s.synthesizer or s.judge)
        return Step("redactio", (TurnSpec(did, s.synthesizer or s.judge or "", "synthesizer",
                                          "redactio", k, "committee_redactio", variables),))
    if not draft.ok:
        return Done("failed", f"the synthesizer gave no report ({draft.failure}: "
                              f"{draft.message}); once fixed, `disputatio resume` asks again")
    return Done("resolved", reason)


# --- the protocol's policy, as app asks for it ------------------------------------------------

def lineup_line(s: State) -> str:
    return (f"committee of {', '.join(s.participants)} · at most {rounds(s.max_rounds)}"
            + (f" · judge {s.judge}" if s.judge else " · no judge"))


def seats(s: State) -> list[SeatSpec]:
    """The judge and the synthesizer; a jury of the lineup does not sit (see ``_judge``)."""
    jurors = {name for name, _ in s.jury}
    return [x for x in judged.seats(s) if x.name not in jurors]


def places(s: State, request: EventData | None) -> Places:
    """Members and the synthesizer in checkouts, the judge in an empty directory."""
    got, jurors = judged.places(s, request), {name for name, _ in s.jury}
    return Places(tuple(n for n in got.names if n not in jurors), got.no_repo - jurors)


def released(s: State, step: Step) -> list[str]:
    return judged.released(s, step)


def accept(s: State, request: str, answers: str = "") -> EventData:
    return judged.accept(s, request, answers)


def retry(s: State, done: Done) -> list[str] | None:
    """What ``disputatio resume`` runs again: when every member was dropped, another attempt
    for those dropped in the last round; when the judge or the synthesizer failed, their turn."""
    if done.status == NO_ACTIVE:
        m = meeting(s)
        return [x.turn.turn_id for x in m.rounds[-1].values()
                if x.kind == "dropped" and x.turn is not None] if m.rounds else []
    if done.status == "failed":
        return judged.retry(s, done)
    return None


def ending(done: Done, primary: str) -> Ending:
    """A meeting that lost every member, or a judge that gave no ruling, fails the command;
    a meeting that ended without a judge closes with why (a line ``-q`` leaves out)."""
    if done.status in (NO_ACTIVE, "failed"):
        return Ending(True, done.reason)
    said = ruling_message(done.status, primary)
    if said is not None:
        return Ending(False, said)
    if done.status in (ALL_PASSED, MAX_ROUNDS, CANCELLED):
        return Ending(False, f"the meeting ended: {done.reason}", closing=True)
    return Ending(False, "")


# --- how its meeting reads (protocols/committee_minutes.py) -----------------------------------

def presentation(s: State) -> Presentation:
    return committee_minutes.presentation(s, meeting(s))
