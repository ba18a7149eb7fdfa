"""The vocabulary shared by protocols: the state they read, the steps they return, and the
interface through which ``app`` runs any of them without knowing its phases, roles or files."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard
from typing import Protocol as Interface

from pydantic import BaseModel

from disputatio.events import (
    DebateStarted,
    EventData,
    HumanActed,
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
    participant: str  # who takes it: a debater's display name, or the judge's / synthesizer's
    role: str         # the part they play: "participant", "judge" or "synthesizer"
    phase: str       # proposal, reaction, respondeo, redactio
    round: int
    template: str    # prompt template name under disputatio/prompts
    variables: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    phase: str
    turns: tuple[TurnSpec, ...]
    notes: tuple[str, ...] = ()   # lines for the user as the step begins (a member dropped)


@dataclass(frozen=True)
class Ask:
    """A question for the human in the loop (``--human``) between steps. ``app`` hands it to
    the face (the terminal), appends the ``HumanActed`` it answers with, and asks the protocol
    again: the answer lives in the ledger, so resume and replay see it like any turn.

    ``choices``: what the human may do — ``agree`` (with one of ``participants``, strength
    1-3), ``skip``, ``steer`` (text for everyone's next turn), ``pick`` (one of ``options``)."""

    key: str                                   # recorded as HumanActed.key
    round: int
    title: str                                 # one line: what just happened
    choices: tuple[str, ...] = ("agree", "skip", "steer")
    participants: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    latest: tuple[tuple[str, str], ...] = ()   # (who, what they said) to show before asking
    notes: tuple[str, ...] = ()                # lines of ours told first (a member dropped)


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
    """What every protocol knows, replayed from ledger events (any objects with ``type`` and
    ``data``), so a resumed debate sees exactly what the interrupted one saw. A protocol keeps
    what only it needs in a subclass, folding the events it cares about in ``fold``."""

    quaestio: str = ""
    participants: list[str] = field(default_factory=list)
    turns: dict[str, Turn] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)   # turn ids in completion order
    started: DebateStarted = field(default_factory=_nothing_started)
    human: list[HumanActed] = field(default_factory=list)   # the human's actions, in order

    @classmethod
    def from_events(cls, events: Iterable[Any]) -> Any:
        s = cls()
        for _, e in typed(events):
            if isinstance(e, DebateStarted):
                s.started = e
                s.quaestio = e.quaestio
                s.participants = list(e.participants)
            elif isinstance(e, TurnCompleted):
                s.turns[e.turn_id] = e
                s.order.append(e.turn_id)
            elif isinstance(e, HumanActed):
                s.human.append(e)
            elif isinstance(e, Resumed):
                # turns the user asked to try again: forget their failed attempt
                for tid in e.retry:
                    if s.turns.pop(tid, None) is not None:
                        s.order.remove(tid)
            s.fold(e)
        return s

    def fold(self, event: EventData) -> None:
        """A protocol's own reading of one event (after the common one above)."""

    @property
    def asks_human(self) -> bool:
        """The debate was started with a human in the loop."""
        return bool(self.started.human)

    def acted(self, key: str) -> HumanActed | None:
        """The human's answer to the question ``key``, if they gave one."""
        return next((h for h in self.human if h.key == key), None)


# --- what a protocol declares --------------------------------------------------------------

class Refused(Exception):
    """A request (``continue``, ``finalize``) the protocol does not accept in the debate's
    present state: one line saying why and what to do instead."""


@dataclass(frozen=True)
class SeatSpec:
    """A role beyond the debaters, as the debate's lineup file keeps it under ``seats.<key>``."""

    name: str          # the participant name it takes turns under
    key: str           # its entry under ``seats`` in lineup.json
    budgeted: bool     # runs under the debate's spend cap (--budget)


@dataclass(frozen=True)
class Places:
    """The workspaces one command needs: who gets one, in order, and who of them works in an
    empty directory instead of a checkout of the repository."""

    names: tuple[str, ...]
    no_repo: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Ending:
    """How a finished debate ends the command: a failure (exit 1) or not, and what to say.
    A ``closing`` message only tells how the debate ended, so ``-q`` leaves it out: stdout's
    path is then all the command prints."""

    failed: bool
    message: str = ""
    closing: bool = False


@dataclass(frozen=True)
class Presentation:
    """What the generic renderers need to know of a protocol to show its debate: a turn's
    title and place in ``debate.md``, lines of ours shown before a turn, and the protocol's own
    documents (given the provenance header that goes above a deliverable)."""

    verdict: str | None                                   # recorded in debate.json
    title: Callable[[Turn], str]
    order: Callable[[Turn, list[str]], tuple]             # sort key, given the debaters
    interlude: Callable[[Turn], list[str]]
    where: Callable[[Turn], str]                          # a turn's place, in a sentence
    documents: Callable[[list[Turn], str], tuple[dict[str, str], str | None]]
    # lines of ours after the last turn (what happened once no turn followed it)
    coda: Callable[[], list[str]] = field(default=lambda: [])
    # debate.md's lines in place of a turn's section, or None to give it one (a committee's
    # passes: one line for the round)
    folded: Callable[[Turn], list[str] | None] = field(default=lambda t: None)
    # the protocol's own keys in debate.json (disputatio: judgment, findings)
    extra: dict[str, Any] = field(default_factory=dict)
    # debate.md's facts in the protocol's own words, over the generic ones ("Rounds": "3 held
    # (at most 8)"); a "Judge" of None: the lineup's judge takes no part in this protocol
    facts: dict[str, str | None] = field(default_factory=dict)


class Protocol(Interface):
    """A protocol as ``app`` runs it; each protocol module provides these names. All pure:
    state in, values out.

    Optional: ``check(config, participants, human) -> config`` — the settings checked against
    the lineup (its participants' names; whether a human is in the loop) before anything is
    made, and completed from it (e.g. roles bound to participants); a ``ValueError`` is one
    line for the user (exit 2)."""

    Config: type[BaseModel]   # its settings (for disputatio: rounds)

    def started(self, config: BaseModel) -> dict[str, Any]: ...
    def state(self, events: Iterable[Any]) -> DebateState: ...
    def next_step(self, state: Any) -> Step | Ask | Done: ...
    def lineup_line(self, state: Any) -> str: ...
    def seats(self, state: Any) -> list[SeatSpec]: ...
    def places(self, state: Any, request: EventData | None) -> Places: ...
    def released(self, state: Any, step: Step) -> list[str]: ...
    def retry(self, state: Any, done: Done) -> list[str] | None: ...
    def accept(self, state: Any, request: str, answers: str = "") -> EventData: ...
    def ending(self, done: Done, primary: str) -> Ending: ...
    def presentation(self, state: Any) -> Presentation: ...


_STATUS = re.compile(r"^status\s*[:=\-–—]\s*(resolved|needs[\s_-]*input)\b", re.IGNORECASE)


def ruling_message(status: str, primary: str) -> str | None:
    """What the user is told when the judge's ruling ends the command short of a report
    (it needs the human, or could not be read); None for any other status."""
    if status == "needs_input":
        return (f"the judge needs your input: read {primary}, then answer with "
                "disputatio continue \"...\"")
    if status == "unclear":
        return (f"the judge's answer could not be read as findings (asked twice): read "
                f"{primary}; answer with disputatio continue \"...\" to ask again")
    return None


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


def answered(turn: Turn | None) -> TypeGuard[Turn]:
    return turn is not None and turn.ok and bool(turn.text.strip())


def foreign(text: str, limit: int) -> str:
    """A quaestio, a ruling or the human's answers as a prompt holds them: quoted, within
    ``limit`` characters."""
    return quote(cut(text.strip(), limit, NOT_SHOWN))


def human_notes(actions: Iterable[HumanActed], labels: Mapping[str, str] | None = None) -> str:
    """What agents (and the judge) are told of the human's actions: lines of ours, the steer
    quoted like any foreign text; empty when the human only skipped. A debater is named by its
    label (``labels``: name -> "Participant A"), as everywhere agents read."""
    lines = []
    for h in actions:
        if h.action == "agree" and h.participant:
            who = (labels or {}).get(h.participant, h.participant)
            lines.append(f"- After round {h.round}, the human agrees with {who} "
                         f"(strength {h.strength or 1} of 3).")
        elif h.action == "steer" and h.text.strip():
            lines.append(f"- After round {h.round}, the human steers the debate:\n\n"
                         f"{foreign(h.text, ANSWERS_BUDGET)}\n")
    return "\n".join(lines)


def human_lines(actions: Iterable[HumanActed]) -> list[str]:
    """The human in the loop's actions as ``debate.md`` shows them (skips included: the
    record says the human was asked)."""
    lines: list[str] = []
    for h in actions:
        lines += [f"## The human, after round {h.round}", ""]
        if h.action == "agree":
            lines += [f"Agrees with {h.participant} (strength {h.strength or 1} of 3).", ""]
        elif h.action == "steer":
            lines += ["Steers the debate:", "", quote(h.text.strip()), ""]
        elif h.action == "pick":
            lines += [f"Picks {h.choice}.", ""]
        else:
            lines += ["Skips.", ""]
    return lines
