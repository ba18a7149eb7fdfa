"""The vocabulary shared by protocols: the state they read and the steps they return."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from disputatio.events import (
    AnswersGiven,
    DebateStarted,
    FinalizeRequested,
    Resumed,
    TurnCompleted,
    typed,
)
from disputatio.text import cut, quote

RESOLVED = "RESOLVED"
NEEDS_INPUT = "NEEDS_INPUT"
UNCLEAR = "UNCLEAR"

NO_CONTRIBUTION = "(no contribution this turn)"


@dataclass(frozen=True)
class TurnSpec:
    """One turn to run: who, in which phase and round, and the prompt to give them."""

    turn_id: str
    role: str        # the participant's display name, or the judge's / synthesizer's
    seat: str        # "participant", "judge" or "synthesizer"
    phase: str       # proposal, reaction, respondeo, redactio
    round: int
    template: str    # prompt template name under disputatio/prompts
    variables: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    phase: str
    turns: tuple[TurnSpec, ...]


@dataclass(frozen=True)
class Done:
    """The protocol has nothing left to run. ``status``: resolved, needs_input, unclear,
    debated (no judge in the lineup: the debate ends after the reactions), aborted (too few
    proposals) or failed (the judge or synthesizer did not answer)."""

    status: str
    reason: str = ""


# A finished turn as the protocol sees it: the ledger's own event, so a field added there is
# seen here (and by the renderers) without another edit.
Turn = TurnCompleted


def _nothing_started() -> DebateStarted:
    return DebateStarted(quaestio="", rounds=0, participants=[])


@dataclass
class DebateState:
    """Everything a protocol may know, replayed from ledger events (any objects with ``type``
    and ``data``), so a resumed debate sees exactly what the interrupted one saw."""

    quaestio: str = ""
    rounds: int = 0
    participants: list[str] = field(default_factory=list)
    judge: str | None = "judge"          # None: a lineup without a judge (debate alone)
    synthesizer: str | None = "judge"
    turns: dict[str, Turn] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)   # turn ids in completion order
    answers: list[str] = field(default_factory=list)
    finalizes: int = 0
    started: DebateStarted = field(default_factory=_nothing_started)

    @classmethod
    def from_events(cls, events) -> DebateState:
        s = cls()
        for _, e in typed(events):
            if isinstance(e, DebateStarted):
                s.started = e
                s.quaestio = e.quaestio
                s.rounds = e.rounds
                s.participants = list(e.participants)
                s.judge = e.judge
                s.synthesizer = e.synthesizer
            elif isinstance(e, TurnCompleted):
                s.turns[e.turn_id] = e
                s.order.append(e.turn_id)
            elif isinstance(e, Resumed):
                # turns the user asked to try again: forget their failed attempt
                for tid in e.retry:
                    if s.turns.pop(tid, None) is not None:
                        s.order.remove(tid)
            elif isinstance(e, AnswersGiven):
                s.answers.append(e.answers)
            elif isinstance(e, FinalizeRequested):
                s.finalizes += 1
        return s

    def respondeo_ids(self) -> list[str]:
        return [t for t in self.order if self.turns[t].phase == "respondeo"]

    def latest_status(self) -> str | None:
        """The newest ruling's status, or None before the judge has ruled (or when it failed)."""
        ids = self.respondeo_ids()
        if not ids or not self.turns[ids[-1]].ok:
            return None
        return parse_status(self.turns[ids[-1]].text)


_STATUS = re.compile(r"^status\s*[:=\-–—]\s*(resolved|needs[\s_-]*input)\b", re.IGNORECASE)


def parse_status(text: str) -> str:
    """The judge's verdict from its first non-blank line; anything unexpected is UNCLEAR.

    Tolerates case, markdown emphasis, headings and quotes (``**Status:** Needs input``) but
    never guesses: a missing or garbled status line is never taken as RESOLVED.
    """
    for line in text.splitlines():
        clean = re.sub(r"[*_`#>]", "", line).strip()
        if not clean:
            continue
        m = _STATUS.match(clean)
        if not m:
            return UNCLEAR
        return RESOLVED if m.group(1).lower() == "resolved" else NEEDS_INPUT
    return UNCLEAR


# What a prompt may hold of foreign text, in characters. The judge's prompt carries the whole
# transcript, and must stay within what every CLI accepts: codex refuses a prompt over 1,048,576
# characters, claude refuses one over its context window (about 200k tokens, less its own ~47 kB
# of system prompt and tools; code-heavy text can run at 2-3 characters a token). These budgets
# keep a prompt under ~300k characters whatever the agents wrote.
TRANSCRIPT_BUDGET = 200_000
QUAESTIO_BUDGET = 20_000
RULING_BUDGET = 40_000
ANSWERS_BUDGET = 20_000
NOT_SHOWN = "of this text not shown here (the whole of it is in the debate's record)"


def contribution(turn: Turn | None, limit: int | None = None) -> str:
    """What other agents see of a turn: its text quoted line by line (so no answer can open a
    section such as "## The human's answers"), cut to ``limit`` characters with a marker, or a
    neutral note, never raw error text."""
    if not answered(turn):
        return NO_CONTRIBUTION
    text = turn.text.strip()
    return quote(cut(text, limit, NOT_SHOWN) if limit is not None else text)


def answered(turn: Turn | None) -> bool:
    return turn is not None and turn.ok and bool(turn.text.strip())


def foreign(text: str, limit: int) -> str:
    """A quaestio, a ruling or the human's answers as a prompt holds them: quoted, within
    ``limit`` characters."""
    return quote(cut(text.strip(), limit, NOT_SHOWN))
