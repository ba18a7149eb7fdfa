"""A judge's answers (prose and a findings block) and the ledger events of a debate at the
judge's step, as the tests of judging and of juries build them."""

from __future__ import annotations

import json
from dataclasses import dataclass

from disputatio.protocols import disputatio as proto


def block(data: dict, prose: str = "My reasons.") -> str:
    return f"{prose}\n\n```json\n{json.dumps(data)}\n```\n"


def finding(id="F1", ruling="upheld", severity="major", **more) -> dict:
    return {"id": id, "point": f"point {id}", "ruling": ruling, "severity": severity,
            "raised_by": ["Participant A"], "reasons": f"why {id}", **more}


def ruling(*findings, status="resolved", questions=(), **more) -> dict:
    return {"status": status, "findings": list(findings), "questions": list(questions),
            "summary": "In short.", **more}


# --- reading --------------------------------------------------------------------------------


@dataclass
class Ev:
    type: str
    data: dict
    ts: str = "2026-12-01T00:00:00.000Z"
    hash: str = "0" * 64


def started(structured: bool = True, **more) -> Ev:
    data = {"quaestio": "Q?", "rounds": 0, "participants": ["a", "b"], "judge": "judge",
            "synthesizer": "judge", **more}
    if structured:
        data["settings"] = {"judging": proto.JUDGING}
    return Ev("debate_started", data)


def done(turn_id, text="answer", role="judge", phase="respondeo", rnd=1, ok=True, seat=None):
    return Ev("turn_completed", {"turn_id": turn_id, "role": role, "seat": seat or role,
                                 "phase": phase, "round": rnd, "ok": ok, "text": text,
                                 "failure": None if ok else "timeout", "message": ""})


def proposals(**more) -> list[Ev]:
    return [started(**more), done("proposal/a", role="a", phase="proposal", rnd=0),
            done("proposal/b", role="b", phase="proposal", rnd=0)]


def step(evs):
    return proto.next_step(proto.state(evs))
