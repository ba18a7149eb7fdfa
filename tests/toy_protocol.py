"""A protocol no part of the house knows: every debater proposes once, then the debate ends with
a notes file of its own as the deliverable. It declares its whole policy through the interface
``app`` runs (``protocols.base.Protocol``), and imports only what a protocol may."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from disputatio.events import EventData
from disputatio.protocols.base import (
    DebateState,
    Done,
    Ending,
    Places,
    Presentation,
    Refused,
    SeatSpec,
    Step,
    TurnSpec,
)


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rounds: int = 0


def started(config: BaseModel) -> dict[str, Any]:
    return {"rounds": 0}


def state(events) -> DebateState:
    return DebateState.from_events(events)


def next_step(s: DebateState) -> Step | Done:
    missing = [p for p in s.participants if f"note/{p}" not in s.turns]
    if missing:
        return Step("notes", tuple(TurnSpec(f"note/{p}", p, "participant", "note", 0,
                                            "proposal", {"quaestio": s.quaestio, "name": p})
                                   for p in missing))
    if not all(s.turns[f"note/{p}"].ok for p in s.participants):
        return Done("incomplete", "a note is missing")
    return Done("noted")


def lineup_line(s: DebateState) -> str:
    return "notes by " + ", ".join(s.participants)


def seats(s: DebateState) -> list[SeatSpec]:
    return []


def places(s: DebateState, request: EventData | None) -> Places:
    return Places(tuple(s.participants), frozenset(s.participants))


def released(s: DebateState, step: Step) -> list[str]:
    return []


def retry(s: DebateState, done: Done) -> list[str] | None:
    return [t for t, turn in s.turns.items() if not turn.ok] if done.status == "incomplete" \
        else None


def accept(s: DebateState, request: str, answers: str = "") -> EventData:
    raise Refused(f"notes take no {request}")


def ending(done: Done, primary: str) -> Ending:
    return Ending(done.status != "noted", f"notes in {primary}" if done.status == "noted"
                  else done.reason)


def presentation(s: DebateState) -> Presentation:
    def documents(ended, header: str):
        notes = "".join(f"- {t.participant}: {len(t.text)} characters\n" for t in ended if t.ok)
        return {"notes.md": notes}, "notes.md"

    return Presentation(verdict=None, title=lambda t: "Note", order=lambda t, ps: (t.turn_id,),
                        interlude=lambda t: [], where=lambda t: "its note",
                        documents=documents)
