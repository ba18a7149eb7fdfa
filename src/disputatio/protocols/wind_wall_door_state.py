"""The Wind/Wall/Door protocol's roles, settings and state: who plays which role, the course
the rules make of the ledger (``Course``), and its turn ids (a turn's number, its place in the
transcript, its place in a sentence).

Shared by its rules (``wind_wall_door``) and how it reads (``wind_wall_door_view``), so that the
view need not import the rules back. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from disputatio.events import DebateStarted, EventData
from disputatio.protocols import labels
from disputatio.protocols.base import Ask, DebateState, Done, Step, Turn

ROLES = ("wind", "wall", "door")
TITLE = {"wind": "Wind", "wall": "Wall", "door": "Door"}
VOICE = {"wind": "What if…", "wall": "Yes, but…", "door": "Therefore…"}
MODE = {"wind": "pathos", "wall": "ethos", "door": "logos"}


class Config(BaseModel):
    """The settings under the lineup's ``protocol:`` key; ``--rounds`` is ``max_rounds``, and a
    ``rounds`` key is refused. The lineup's top-level ``rounds`` (the disputatio protocol's
    reaction rounds) is not read."""

    model_config = ConfigDict(extra="forbid", strict=True)
    ROUNDS_FLAG: ClassVar[str] = "max_rounds"   # the setting --rounds sets

    wind: str | None = None          # the participant playing each role (default: lineup order)
    wall: str | None = None
    door: str | None = None
    order: Literal["fixed", "mediated"] = "fixed"
    mediator: str | None = None      # mediated order: who picks (None: the human, --human)
    max_rounds: int = Field(4, ge=1, le=20)
    max_turns: int = Field(12, ge=1, le=60)
    max_refinement_loops: int = Field(3, ge=0, le=10)
    strict: bool = False
    max_redos: int = Field(2, ge=0, le=5)


@dataclass
class State(DebateState):
    """The debate as its ledger has it, with the settings ``debate_started`` recorded (``cfg``):
    who plays each role, by name for the user and by label for the agents."""

    cfg: Config = field(default_factory=Config)

    def fold(self, event: EventData) -> None:
        if isinstance(event, DebateStarted) and event.settings is not None:
            self.cfg = Config.model_validate(event.settings)

    def player(self, role: str) -> str:
        return (getattr(self.cfg, role) if role in ROLES else None) or ""

    def label(self, role: str) -> str:
        return f"{TITLE[role]} ({self.player(role)})"

    def seen(self, role: str) -> str:
        """A role as agents read it: its player by the neutral label, never by name."""
        return f"{TITLE[role]} ({self.called(self.player(role))})"

    def called(self, name: str) -> str:
        return labels.of(self.started).get(name, "a participant")


@dataclass
class Course:
    """The debate as the rules read it: the turns that stand, notes of ours for debate.md,
    the votes, the latest synthesis, and what comes next."""

    spoken: list[tuple[str, Turn]] = field(default_factory=list)   # (role, turn) that stand
    notes: dict[str, list[str]] = field(default_factory=dict)   # on a turn id / before turn n
    votes: list[tuple[int, str, str, Turn]] = field(default_factory=list)
    synthesis: Turn | None = None
    called: int = 0                  # the debate turn on which Door called the vote
    next: Step | Ask | Done = Done("")


# --- its turn ids ----------------------------------------------------------------------------

def number(turn_id: str) -> int:
    """The turn's n (debate turns, picks) or the synthesis's k (votes, refinements)."""
    m = re.match(r"(?:turn|pick|vote|refine)-(\d+)", turn_id)
    return int(m.group(1)) if m else 0


def rank(turn_id: str) -> tuple:
    """Where a turn sits: debate turns (a pick before its turn, redos after), then each
    synthesis's votes and the refinement they led to."""
    n = number(turn_id)
    redo = int(turn_id.rsplit(".redo-", 1)[1]) if ".redo-" in turn_id else 0
    if turn_id.startswith(("vote-", "refine-")):
        return (1, n, turn_id.startswith("refine-"), "wall" in turn_id, redo)
    return (0, n, not turn_id.startswith("pick-"), 0, redo)


def where_of(turn_id: str) -> str:
    """A turn's place, in a sentence (progress, failures, the degradation lines)."""
    n = number(turn_id)
    if turn_id.startswith("vote-"):
        return f"the vote on synthesis {n}"
    if turn_id.startswith("refine-"):
        return f"refinement {n}"
    if turn_id.startswith("pick-"):
        return f"the pick for turn {n}"
    return f"turn {n}"
