"""A committee meeting as its ledger has it: the state, the rounds of seats replayed from it
(who spoke, passed, was dropped, or is to try next), why the meeting ended, its transcript as the
members, the judge and the minutes read it, and the status of a ruling on it.

Shared by the committee's policy (``committee``) and its minutes (``committee_minutes``), so that
the minutes need not import the policy back. Nothing is stored besides the ledger's own events:
a drop, a pass and the reason the meeting ended are all derived, so a resumed or replayed
meeting decides exactly as the first run did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from disputatio.events import DebateStarted, EventData
from disputatio.protocols import disputatio as judged
from disputatio.protocols import judging, labels
from disputatio.protocols.base import (
    TRANSCRIPT_BUDGET,
    UNCLEAR,
    Turn,
    contribution,
    human_notes,
)
from disputatio.text import fair_caps, one_line

PASS = "<PASS/>"
CLOSE = "close the meeting"
# failure kinds (adapters.base) that say nothing about the member, only about the moment
RETRYABLE = frozenset({"timeout", "rate_limit", "api_error"})
PHASE = "contribution"

ALL_PASSED, MAX_ROUNDS = "all-passed", "max-rounds"
NO_ACTIVE, CANCELLED = "no-active-members", "cancelled"


@dataclass
class State(judged.State):
    """The meeting as the ledger has it, with the judge's part read as the disputatio protocol
    reads it (judge, synthesizer, answers, re-drafts)."""

    max_rounds: int = 8
    attempts: int = 3

    def fold(self, event: EventData) -> None:
        super().fold(event)
        if isinstance(event, DebateStarted):
            settings = event.settings or {}
            self.max_rounds = int(settings.get("max_rounds", event.rounds or 8))
            self.attempts = int(settings.get("attempts", 3))

    def latest_status(self) -> str | None:
        """The newest ruling's status (``verdict``), or None before the judge has ruled."""
        ids = [t for t in self.order if self.turns[t].phase == "respondeo"]
        last = self.turns[ids[-1]] if ids else None
        return verdict(last.text, quoted(self)) if last is not None and last.ok else None


def attempt_id(rnd: int, member: str, n: int = 1) -> str:
    return f"round-{rnd}/{member}" + (f"/attempt-{n}" if n > 1 else "")


def is_pass(text: str) -> bool:
    """Exactly ``<PASS/>``, whitespace around it tolerated; anything else is a contribution."""
    return text.strip() == PASS


# --- the meeting, replayed -------------------------------------------------------------------

@dataclass(frozen=True)
class Seat:
    """One member's part in one round: ``spoke``, ``passed``, ``dropped`` (``turn``: its last
    failed attempt) or ``pending`` (``attempt``: the try to run next)."""

    member: str
    kind: str
    attempt: int
    turn: Turn | None = None


@dataclass
class Meeting:
    rounds: list[dict[str, Seat]] = field(default_factory=list)   # round r at index r-1
    dropped: dict[str, int] = field(default_factory=dict)          # member -> round dropped in
    asking: bool = False        # the human is to be asked about the last round
    end: str | None = None      # the termination reason, once the meeting is over

    @property
    def held(self) -> int:
        return len(self.rounds)

    def pending(self) -> list[Seat]:
        return [x for x in self.rounds[-1].values() if x.kind == "pending"] if self.rounds else []


def _seat(s: State, rnd: int, member: str) -> Seat:
    last: Turn | None = None
    for n in range(1, s.attempts + 1):
        t = s.turns.get(attempt_id(rnd, member, n))
        if t is None:
            return Seat(member, "pending", n)
        if t.ok:
            return Seat(member, "passed" if is_pass(t.text) else "spoke", n, t)
        last = t
        if t.failure not in RETRYABLE:
            return Seat(member, "dropped", n, t)
    return Seat(member, "dropped", s.attempts, last)


def meeting(s: State) -> Meeting:
    """The rounds held so far and, once it is over, why the meeting ended."""
    m = Meeting()
    active = list(s.participants)
    while True:
        if m.held:
            rnd = m.held
            seats = m.rounds[-1]
            if m.pending():
                return m
            for x in seats.values():
                if x.kind == "dropped":
                    active.remove(x.member)
                    m.dropped[x.member] = rnd
            if s.asks_human and active and s.acted(f"round-{rnd}") is None:
                m.asking = True
                return m
        m.end = _termination(s, m, active)
        if m.end:
            return m
        m.rounds.append({p: _seat(s, m.held + 1, p) for p in active})


def _termination(s: State, m: Meeting, active: list[str]) -> str | None:
    """Checked before every round, in this order (the first that holds ends the meeting)."""
    said = s.acted(f"round-{m.held}")
    if said is not None and said.action == "pick" and said.choice == CLOSE:
        return CANCELLED
    if not active:
        return NO_ACTIVE
    if m.held >= s.max_rounds:
        return MAX_ROUNDS
    steered = said is not None and said.action == "steer" and said.text.strip()
    if m.held and not steered and all(m.rounds[-1][p].kind == "passed" for p in active):
        return ALL_PASSED
    return None


def describe(s: State, m: Meeting) -> str:
    """Why the meeting ended, in words rather than its status's name."""
    why = {CANCELLED: f"the human closed it after {rounds(m.held)}",
           NO_ACTIVE: f"every member was dropped, the last in round {m.held}",
           MAX_ROUNDS: f"the round cap ({s.max_rounds}) was reached",
           ALL_PASSED: f"every member passed in round {m.held}"}.get(m.end or "", "")
    gone = [f"{p} in round {r}" for p, r in m.dropped.items()]
    return why + (f"; dropped: {', '.join(gone)}" if gone and m.end != NO_ACTIVE else "")


def ended(s: State, m: Meeting) -> str:
    """The meeting's closing line: ``the meeting ended: <why>``."""
    return f"the meeting ended: {describe(s, m)}"


def rounds(n: int) -> str:
    return f"{n} round" + ("" if n == 1 else "s")


def listed(members: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(members[:-1]), members[-1]] if len(members) > 1
                        else members)


# --- the meeting as its readers see it -----------------------------------------------------

def seat_lines(s: State, rnd: int, x: Seat, cap: int | None, level: str,
               names: dict[str, str] | None = None) -> list[str]:
    """A seat as a transcript shows it: a contribution under a heading, a pass or a drop in a
    line; ``names`` (labels) for a reader who must not see who is who."""
    who = (names or {}).get(x.member, x.member)
    if x.kind == "spoke":
        return [f"{level} {who}, round {rnd}", "", contribution(x.turn, cap), ""]
    if x.kind == "passed":
        return [f"- {who} passed in round {rnd}.", ""]
    return [f"- System: {drop_line(s, x, who)}", ""]


def drop_line(s: State, x: Seat, who: str | None = None) -> str:
    t = x.turn
    why = f"{t.failure}: {one_line(t.message or '', 200)}" if t is not None else "no answer"
    tries = f"{x.attempt} failed attempts" if x.attempt > 1 else "a failed attempt"
    rnd = t.round if t is not None else 0
    return f"{who or x.member} is dropped from the meeting after {tries} in round {rnd} ({why})."


def transcript(s: State, m: Meeting, level: str = "###", reader: str | None = None) -> str:
    """The whole meeting by round, passes and drops included. The minutes name the members;
    a ``reader`` (the judge, the synthesizer) sees labels only, each round in the order
    shuffled for it from the debate's seed."""
    names = labels.of(s.started) if reader is not None else None
    rounds = [list(seats.values()) for seats in m.rounds]
    if reader is not None:
        rounds = [labels.shuffled(xs, s.started.seed or 0, reader, f"round-{r}")
                  for r, xs in enumerate(rounds, start=1)]
    entries = [x for xs in rounds for x in xs]
    caps = iter(fair_caps([len(x.turn.text) if x.kind == "spoke" and x.turn else 0
                           for x in entries], TRANSCRIPT_BUDGET))
    lines: list[str] = []
    for r, xs in enumerate(rounds, start=1):
        lines += [f"{level} Round {r}", ""]
        for x in xs:
            lines += seat_lines(s, r, x, next(caps), level + "#", names)
        notes = human_notes((h for h in s.human if h.round == r), names)
        if notes:
            lines += [notes, ""]
    return "\n".join(lines).strip()


# --- a ruling on the meeting ----------------------------------------------------------------

def verdict(text: str, quoted: list[str] | tuple[str, ...] = ()) -> str:
    """A ruling's status, computed from its findings block (``judging``), never from a
    sentence; an answer without a readable block of its own (``quoted``) is UNCLEAR."""
    found = judging.read(text, quoted=quoted).answer
    if not isinstance(found, judging.Answer):
        return UNCLEAR
    return judging.judge([judging.Seat("judge", answer=found)]).status


def quoted(s: State) -> list[str]:
    """What the judge may quote but never rule by: the question and the members' words."""
    return [s.quaestio, *(t.text for t in s.turns.values()
                          if t.ok and t.participant in s.participants)]
