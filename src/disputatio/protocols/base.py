"""The vocabulary shared by protocols: the state they read and the steps they return."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

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
    aborted (too few proposals) or failed (the judge or synthesizer did not answer)."""

    status: str
    reason: str = ""


@dataclass(frozen=True)
class Turn:
    """A finished turn as the protocol sees it."""

    turn_id: str
    role: str
    phase: str
    round: int
    ok: bool
    text: str
    failure: str | None = None
    message: str = ""


@dataclass
class DebateState:
    """Everything a protocol may know, replayed from ledger events (any objects with ``type``
    and ``data``), so a resumed debate sees exactly what the interrupted one saw."""

    quaestio: str = ""
    rounds: int = 0
    participants: list[str] = field(default_factory=list)
    judge: str = "judge"
    synthesizer: str = "judge"
    turns: dict[str, Turn] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)   # turn ids in completion order
    answers: list[str] = field(default_factory=list)
    finalizes: int = 0
    started: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_events(cls, events) -> DebateState:
        s = cls()
        for ev in events:
            d = ev.data
            if ev.type == "debate_started":
                s.started = d
                s.quaestio = d["quaestio"]
                s.rounds = d["rounds"]
                s.participants = list(d["participants"])
                s.judge = d["judge"]
                s.synthesizer = d["synthesizer"]
            elif ev.type == "turn_completed":
                s.turns[d["turn_id"]] = Turn(d["turn_id"], d["role"], d["phase"], d["round"],
                                             d["ok"], d.get("text", ""), d.get("failure"),
                                             d.get("message", ""))
                s.order.append(d["turn_id"])
            elif ev.type == "resumed":
                # turns the user asked to try again: forget their failed attempt
                for tid in d.get("retry", ()):
                    if s.turns.pop(tid, None) is not None:
                        s.order.remove(tid)
            elif ev.type == "answers_given":
                s.answers.append(d["answers"])
            elif ev.type == "finalize_requested":
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


def contribution(turn: Turn | None) -> str:
    """What other agents see of a turn: its text with its headings demoted below the prompt's
    own (so no answer can open a section such as "## The human's answers"), or a neutral note,
    never raw error text."""
    if turn is None or not turn.ok or not turn.text.strip():
        return NO_CONTRIBUTION
    return demote(turn.text.strip(), 3)


_HEADING = re.compile(r"^(#{1,6})(\s)")
_FENCE = re.compile(r"^\s*(```|~~~)")


def demote(text: str, levels: int) -> str:
    """Push every markdown heading down ``levels`` levels (at most to h6; deeper ones become
    bold lines), leaving fenced code untouched."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            m = _HEADING.match(line)
            if m:
                depth = len(m.group(1)) + levels
                title = line[m.end():].strip()
                line = f"{'#' * depth} {title}" if depth <= 6 else f"**{title}**"
        out.append(line)
    return "\n".join(out)
