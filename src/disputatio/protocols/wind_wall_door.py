"""The Wind / Wall / Door protocol: three roles, a synthesis, and a vote on it.

Wind ("What if…") expands, Wall ("Yes, but…") grounds, Door ("Therefore…") synthesizes. Each
role is played by a participant of the lineup (one may play several). Turns go Wind → Wall →
Door → Wind…, or in a mediated order where the human (``--human``) or a ``mediator``
participant picks each next speaker. A round is three turns; ``max_turns`` and ``max_rounds``
bound the debate, which ends in ``exhaustion`` when they run out before Door calls the vote.

Door calls the vote (a line ``CALL THE VOTE``) when its synthesis is ready: Wind, then Wall,
answer APPROVE or REJECT. A rejection sends the voter's feedback to Door, who refines; both
approving ends the debate as ``synthesis``; a synthesis still rejected after
``max_refinement_loops`` refinements ends it as ``stalemate``. Each role's turn is held to its
contract (deterministic rules): a breach is a warning, or with ``strict`` a refused turn the
role answers again (at most ``max_redos`` times, then ``force_closed``).

The roles, the settings' model and the state are in ``wind_wall_door_state``, the rules over text in
``wind_wall_door_rules``, how the debate reads in ``wind_wall_door_view``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from disputatio.events import EventData
from disputatio.protocols.base import (
    QUAESTIO_BUDGET,
    TRANSCRIPT_BUDGET,
    Ask,
    Done,
    Ending,
    Places,
    Presentation,
    Refused,
    SeatSpec,
    Step,
    Turn,
    TurnSpec,
    answered,
    contribution,
    foreign,
    human_notes,
)
from disputatio.protocols.wind_wall_door_rules import (  # noqa: F401  (the rules, re-exported)
    APPROVE,
    REJECT,
    breaches,
    calls_vote,
    parse_pick,
    parse_vote,
)
from disputatio.protocols.wind_wall_door_state import (
    ROLES,
    TITLE,
    VOICE,
    Config,
    Course,
    State,
    number,
    rank,
    where_of,
)
from disputatio.protocols.wind_wall_door_view import idle_players, present, sits_out
from disputatio.text import fair_caps, one_line

# the synthesis voted on and a rejection's feedback, shown again beside the transcript: with
# it and the quaestio a prompt stays within base's ~300k characters
FOCUS_BUDGET = 40_000
# the lineup's judge takes no part: nobody rules, nobody is recused
SEATED_JUDGES = None


class SettingError(ValueError):
    """A setting that does not fit the lineup; ``key`` names it, so that the error points at
    its own line of the lineup file."""

    def __init__(self, key: str, what: str):
        super().__init__(f"protocol.{key}: {what}")
        self.key = (key,)


def check(config: BaseModel, participants: list[str], human: bool) -> Config:
    """The settings checked against the lineup and completed from it: roles default to the
    participants in lineup order (Door to the third, else the first)."""
    assert isinstance(config, Config)
    c = config
    fill = {"wind": participants[0], "wall": participants[1 % len(participants)],
            "door": participants[2] if len(participants) > 2 else participants[0]}
    for key in (*ROLES, "mediator"):
        name = getattr(c, key)
        if name is not None and name not in participants:
            raise SettingError(key, f"'{name}' is not a participant of the lineup "
                                    f"({', '.join(participants)})")
    if c.mediator is not None and c.order != "mediated":
        raise SettingError("mediator", "only the mediated order has a mediator; add "
                                       "'order: mediated' or drop 'mediator'")
    if c.order == "mediated" and c.mediator is None and not human:
        raise SettingError("order", "in the mediated order without a 'mediator' participant "
                                    "you pick each speaker: run with --human")
    return c.model_copy(update={k: getattr(c, k) or fill[k] for k in ROLES})


def started(config: BaseModel) -> dict[str, Any]:
    assert isinstance(config, Config)
    return {"rounds": config.max_rounds, "settings": config.model_dump()}


def state(events: Iterable[Any]) -> State:
    return State.from_events(events)


# --- the course of the debate -------------------------------------------------------------

def course(s: State) -> Course:
    c = Course()
    c.next = _debate(s, c)
    return c


def next_step(s: State) -> Step | Ask | Done:
    """What runs next; the debate's first step (or the human's first pick) also warns of
    participants who sit it out."""
    step = course(s).next
    idle = idle_players(s)
    if isinstance(step, Step | Ask) and idle and not s.turns and not s.human:
        step = replace(step, notes=(*step.notes, f"{sits_out(idle)} (protocol: wind, wall "
                                                 "and door name who plays each role)"))
    return step


def _debate(s: State, c: Course) -> Step | Ask | Done:
    cfg = s.cfg
    n, last = 0, None
    while True:
        if n >= cfg.max_turns or n // 3 >= cfg.max_rounds:
            what = (f"{_count(n, 'turn')}, the most allowed (max_turns {cfg.max_turns})"
                    if n >= cfg.max_turns else f"{_count(n // 3, 'round')}, the most allowed "
                                               f"(max_rounds {cfg.max_rounds})")
            return Done("exhaustion", f"{what}, and Door never called the vote")
        n += 1
        rnd = (n - 1) // 3 + 1
        if n > 1 and n % 3 == 1 and s.asks_human and not _human_picks(s):
            ask = _after_round(s, c, rnd - 1)
            if ask is not None:
                return ask
        role = _pick(s, c, n, rnd, last)
        if not isinstance(role, str):
            return role
        got = _attempts(s, c, f"turn-{n}/{role}", role,
                        lambda tid, redo, role=role, n=n, rnd=rnd: TurnSpec(
                            tid, s.player(role), role, role, rnd, f"wwd-{role}",
                            _vars(s, c, role, redo, turn=str(n), round=str(rnd),
                                  last=_last_note(s, n) if role == "door" else "")))
        if not isinstance(got, Turn):
            return got
        c.spoken.append((role, got))
        last = role
        if role == "door":
            c.synthesis = got
            if calls_vote(got.text):
                c.called = n
                return _consensus(s, c)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _consensus(s: State, c: Course) -> Step | Done:
    cfg = s.cfg
    for k in range(1, cfg.max_refinement_loops + 2):
        rejected = None
        for voter in ("wind", "wall"):
            t = s.turns.get(f"vote-{k}/{voter}")
            if t is None:
                return Step(f"vote on synthesis {k} · {TITLE[voter]}", (TurnSpec(
                    f"vote-{k}/{voter}", s.player(voter), voter, "vote", k, "wwd-vote",
                    _vars(s, c, voter, [], k=str(k),
                          synthesis=contribution(c.synthesis, FOCUS_BUDGET))),))
            if not answered(t):
                return _failed(s, t, f"the vote on synthesis {k}")
            verdict = parse_vote(t.text)
            c.votes.append((k, voter, verdict, t))
            if verdict == REJECT:
                rejected = (voter, t)
                break
        if rejected is None:
            after = f" after {k - 1} refinement{'s' if k > 2 else ''}" if k > 1 else ""
            return Done("synthesis", f"Wind and Wall approved Door's synthesis{after}")
        if k > cfg.max_refinement_loops:
            n = cfg.max_refinement_loops
            return Done("stalemate", f"{TITLE[rejected[0]]} rejected Door's synthesis after "
                                     f"{n} refinement{'' if n == 1 else 's'}")
        voter, vote = rejected
        got = _attempts(s, c, f"refine-{k}/door", "door", lambda tid, redo, k=k, vote=vote,
                        voter=voter: TurnSpec(
            tid, s.player("door"), "door", "refine", k, "wwd-refine",
            _vars(s, c, "door", redo, k=str(k), max=str(cfg.max_refinement_loops),
                  voter=s.seen(voter), feedback=contribution(vote, FOCUS_BUDGET),
                  synthesis=contribution(c.synthesis, FOCUS_BUDGET))))
        if not isinstance(got, Turn):
            return got
        c.spoken.append(("door", got))
        c.synthesis = got
    raise AssertionError("unreachable: the last round of votes returns")


def _attempts(s: State, c: Course, base: str, role: str,
              spec: Callable[..., TurnSpec]) -> Turn | Step | Done:
    """A role's turn and, with ``strict``, its redos: the first answer within the contract
    stands (without ``strict`` the first answer stands, a breach noted as a warning)."""
    cfg = s.cfg
    refused: list[str] = []
    tries = cfg.max_redos + 1 if cfg.strict else 1
    for a in range(tries):
        tid = base if a == 0 else f"{base}.redo-{a}"
        t = s.turns.get(tid)
        if t is None:
            return Step(f"{where_of(tid)} · {TITLE[role]}" + (f", redo {a}" if a else ""),
                        (spec(tid, refused),))
        if not answered(t):
            return _failed(s, t, where_of(tid))
        broken = breaches(role, t.text)
        if not broken:
            return t
        what = f"this answer breaks {TITLE[role]}'s contract: {'; '.join(broken)}"
        if not cfg.strict:
            c.notes[tid] = [f"> **Contract warning:** {what}.", ""]
            return t
        then = f"{TITLE[role]} answers again" if a + 1 < tries else \
            "no redo is left, and the debate is force-closed"
        c.notes[tid] = [f"> **Refused:** {what}; {then}.", ""]
        refused = broken
    times = "once" if cfg.max_redos == 0 else f"{cfg.max_redos + 1} times in a row"
    return Done("force_closed", f"{s.label(role)} broke its contract {times} "
                                f"({'; '.join(refused)})")


def _failed(s: State, t: Turn, where: str) -> Done:
    return Done("failed", f"{t.participant} gave no answer in {where} ({t.failure}: "
                          f"{one_line(t.message or 'no text', 200)}); once fixed, "
                          "`disputatio resume` asks again")


def _human_picks(s: State) -> bool:
    return s.cfg.order == "mediated" and s.cfg.mediator is None


def _pick(s: State, c: Course, n: int, rnd: int, last: str | None) -> str | Step | Ask | Done:
    """Who speaks at turn ``n``: the fixed order, the human's pick, or the mediator's (a
    garbled answer falls back to the fixed order, noted in debate.md)."""
    fixed = ROLES[(ROLES.index(last) + 1) % 3] if last else "wind"
    if s.cfg.order == "fixed":
        return fixed
    if _human_picks(s):
        acted = s.acted(f"pick-{n}")
        if acted is None:
            latest = tuple((s.label(r), t.text) for r, t in c.spoken[-1:])
            return Ask(f"pick-{n}", rnd, f"Who speaks at turn {n} (round {rnd})?",
                       choices=("pick",), options=tuple(TITLE[r] for r in ROLES),
                       latest=latest)
        chosen = (acted.choice or "").lower()
        return chosen if chosen in ROLES else fixed
    t = s.turns.get(f"pick-{n}")
    if t is None:
        spoken = ", ".join(f"{TITLE[r]} {sum(1 for x, _ in c.spoken if x == r)}" for r in ROLES)
        return Step(f"the pick for turn {n}", (TurnSpec(
            f"pick-{n}", s.cfg.mediator or "", "mediator", "pick", rnd, "wwd-pick",
            _vars(s, c, "", [], turn=str(n), fixed=TITLE[fixed], spoken=spoken)),))
    if not answered(t):
        return _failed(s, t, f"the pick for turn {n}")
    picked = parse_pick(t.text)
    if picked is None:
        c.notes[f"turn {n}"] = [f"_The mediator's answer named no one role: the fixed order "
                                f"gives turn {n} to {TITLE[fixed]}._", ""]
    return picked or fixed


def _after_round(s: State, c: Course, rnd: int) -> Ask | None:
    key = f"round-{rnd}"
    if s.acted(key) is not None:
        return None
    return Ask(key, rnd, f"Round {rnd} is over", participants=tuple(TITLE[r] for r in ROLES),
               latest=tuple((s.label(r), t.text) for r, t in c.spoken[-3:]))


def _last_note(s: State, n: int) -> str:
    cfg = s.cfg
    if n >= cfg.max_turns or n // 3 >= cfg.max_rounds:
        return ("- This is the last turn the limits allow: if you do not call the vote now, "
                "the debate ends in exhaustion, with no agreed synthesis.\n")
    return ""


def _vars(s: State, c: Course, role: str, redo: list[str], **more: str) -> dict[str, str]:
    """The variables every wwd-* template may use."""
    redone = ""
    if redo:
        redone = (f"\n## Your previous answer was refused\n\nIt broke {TITLE[role]}'s contract: "
                  f"{'; '.join(redo)}. Answer again, meeting the contract.\n")
    return {"quaestio": foreign(s.quaestio, QUAESTIO_BUDGET),
            "name": s.called(s.player(role) or s.cfg.mediator or ""),
            "transcript": transcript(s, c), "redo": redone,
            "strict": ("A turn that breaks the contract is refused and must be redone."
                       if s.cfg.strict else "A turn that breaks the contract is marked."),
            "rounds": str(s.cfg.max_rounds), "max_turns": str(s.cfg.max_turns),
            "roles": ", ".join(s.seen(r) for r in ROLES), **more}


def transcript(s: State, c: Course) -> str:
    """The turns that stand and the votes so far, each quoted under a heading of ours, within
    ``TRANSCRIPT_BUDGET`` (long answers cut evenly)."""
    entries = [(_heading(s, r, t), t) for r, t in c.spoken]
    entries += [(f"Vote on synthesis {k} — {s.seen(v)}: {verdict}", t)
                for k, v, verdict, t in c.votes]
    entries.sort(key=lambda e: rank(e[1].turn_id))
    if not entries:
        return "(nothing yet: this is the first turn)"
    caps = fair_caps([len(t.text.strip()) for _, t in entries], TRANSCRIPT_BUDGET)
    text = "\n\n".join(f"### {h}\n\n{contribution(t, cap)}"
                       for (h, t), cap in zip(entries, caps, strict=True))
    notes = human_notes(h for h in s.human if h.action != "pick")
    return text + (f"\n\n### The human in the loop\n\n{notes}" if notes else "")


def _heading(s: State, role: str, t: Turn) -> str:
    where = f"refinement {t.round}" if t.phase == "refine" else f"turn {number(t.turn_id)}"
    return f"{s.seen(role)}, {where} — “{VOICE[role]}”"


# --- the protocol's policy, as app asks for it ------------------------------------------

def lineup_line(s: State) -> str:
    picks = f" · {s.cfg.mediator} picks" if s.cfg.mediator else \
        (" · you pick" if _human_picks(s) else "")
    return ", ".join(s.label(r) for r in ROLES) + f" · {s.cfg.order} order{picks}"


def seats(s: State) -> list[SeatSpec]:
    """No seats beyond the lineup's participants: a judge in the lineup takes no part."""
    return []


def _players(s: State) -> list[str]:
    names = [s.player(r) for r in ROLES] + ([s.cfg.mediator] if s.cfg.mediator else [])
    return [p for p in s.participants if p in names]


def places(s: State, request: EventData | None) -> Places:
    """The role players work in checkouts (Wall's evidence may come from running the tests);
    a mediator who plays no role picks in an empty directory."""
    roles = {s.player(r) for r in ROLES}
    return Places(tuple(_players(s)), frozenset(p for p in _players(s) if p not in roles))


def released(s: State, step: Step) -> list[str]:
    return []


def retry(s: State, done: Done) -> list[str] | None:
    """A debate stopped on a failed turn runs it again; every other end is final."""
    if done.status != "failed":
        return None
    return [t.turn_id for t in s.turns.values() if not answered(t)]


def accept(s: State, request: str, answers: str = "") -> EventData:
    raise Refused(f"the Wind/Wall/Door protocol has no {request}: its deliverable is the "
                  "synthesis Wind and Wall vote on; start a new debate to go further")


def ending(done: Done, primary: str) -> Ending:
    """A failed turn and a force-closed debate fail the command; a stalemate or an exhaustion
    closes with why (a line ``-q`` leaves out)."""
    if done.status in ("failed", "force_closed"):
        return Ending(True, done.reason)
    if done.status in ("stalemate", "exhaustion"):
        return Ending(False, f"{done.status}: {done.reason}; read {primary}", closing=True)
    return Ending(False, "")


def presentation(s: State) -> Presentation:
    """How its debate reads (``wind_wall_door_view``): the course, as the rules read it."""
    return present(s, course(s))
