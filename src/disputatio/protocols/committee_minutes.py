"""How a committee meeting reads: ``debate.md``'s titles (rounds, attempts, drops), a round's
passes in one line, the system lines and the human's actions between rounds, the judge's
rulings and report, and ``minutes.md``, where every member stood when the meeting ended."""

from __future__ import annotations

from typing import Any

from disputatio.events import HumanActed
from disputatio.protocols import judging, labels, rulings
from disputatio.protocols.base import Presentation, Turn, contribution, human_lines
from disputatio.protocols.committee_meeting import (
    CLOSE,
    PHASE,
    Meeting,
    State,
    describe,
    drop_line,
    is_pass,
    listed,
    quoted,
    transcript,
)
from disputatio.text import one_line, quote, sanitize


def presentation(s: State, m: Meeting) -> Presentation:
    drops = {x.turn.turn_id: x for seats in m.rounds for x in seats.values()
             if x.kind == "dropped" and x.turn is not None}
    unshown_drops = sorted(drops.values(), key=lambda x: x.turn.round if x.turn else 0)
    unshown_human = list(s.human)
    answers = iter(s.answers)

    def title(t: Turn) -> str:
        if t.phase != PHASE:
            return _judge_title(t)
        n = _attempt(t)
        return (f"Round {t.round}" + (f", attempt {n}" if n > 1 else "")
                + (", passes" if t.ok and is_pass(t.text) else "")
                + (", dropped" if t.turn_id in drops else ""))

    def due(before: float) -> list[str]:
        """What happened between rounds and is not shown yet: drops, then the human."""
        lines: list[str] = []
        for x in [x for x in unshown_drops if x.turn and x.turn.round < before]:
            unshown_drops.remove(x)
            lines += [f"## System, after round {x.turn.round if x.turn else 0}", "",
                      drop_line(s, x), ""]
        acts = [h for h in unshown_human if h.round < before]
        for h in acts:
            unshown_human.remove(h)
        return lines + _human(acts)

    def interlude(t: Turn) -> list[str]:
        """Before a round, what happened after the one before; before a ruling, the rest and
        the answers it was given."""
        lines = due(t.round if t.phase == PHASE else m.held + 1)
        if t.phase == "respondeo" and t.round > 1:
            lines += ["## The human's answers", "", quote(next(answers, "").strip()), ""]
        return lines

    def where(t: Turn) -> str:
        if t.phase != PHASE:
            return t.phase
        n = _attempt(t)
        return f"round {t.round}" + (f" (attempt {n})" if n > 1 else "")

    def order(t: Turn, participants: list[str]) -> tuple:
        """By round, a round's passes after what was said in it."""
        who = participants.index(t.participant) if t.participant in participants \
            else len(participants)
        return (t.phase != PHASE, t.round if t.phase == PHASE else 0, passes(t), _attempt(t),
                who, t.phase == "redactio", t.round, t.turn_id)

    def passes(t: Turn) -> bool:
        return t.phase == PHASE and t.ok and is_pass(t.text)

    told: set[int] = set()

    def folded(t: Turn) -> list[str] | None:
        """A round's passes in one line, where its first pass would be; None for a turn that
        is a section of its own."""
        if not passes(t):
            return None
        if t.round in told:
            return []
        told.add(t.round)
        seats = m.rounds[t.round - 1].values() if t.round <= m.held else ()
        who = [x.member for x in seats if x.kind == "passed"] or [t.participant]
        every = len(who) == len(seats)
        return [f"## Round {t.round}, passes", "",
                (f"Every member passed: {listed(who)}." if every and len(who) > 1
                 else f"{listed(who)} passed."), ""]

    def documents(ended: list[Turn], header: str) -> tuple[dict[str, str], str | None]:
        files, primary = _rulings(s, ended, header)
        files["minutes.md"] = header + minutes(s, m)
        return files, primary or "minutes.md"

    last = None
    for _, judgment in _judgments(s, [s.turns[t] for t in s.order]):
        last = judgment
    names = {label: name for name, label in labels.of(s.started).items()}
    extra: dict[str, Any] = {} if last is None else {
        "judgment": {**rulings.record(last), "recused": labels.recused(s.started)},
        "findings": rulings.findings(last, names)}
    # debate.json: why the meeting ended, even when a judge then ruled on it
    extra.update(ending=m.end, rounds_held=m.held)
    return Presentation(verdict=s.latest_status(), title=title, order=order,
                        interlude=interlude, where=where, documents=documents,
                        coda=lambda: due(float("inf")), folded=folded, extra=extra,
                        facts={"Rounds": f"{m.held} held (at most {s.max_rounds})"})


def _judge_title(t: Turn) -> str:
    if t.phase == "respondeo":
        return "Respondeo" + (f" {t.round}" if t.round > 1 else "")
    return "Redactio" + (f", re-draft {t.turn_id.rsplit('.', 1)[1]}" if "." in t.turn_id
                         else "")


def _rulings(s: State, ended: list[Turn], header: str) -> tuple[dict[str, str], str | None]:
    """respondeo.md, respondeo-2.md, ... and final-report.md (the latest report drafted), as
    the disputatio protocol names them; the primary is the report, else the latest ruling. A
    ruling that ends with findings reads as the disputatio protocol's do (``rulings``)."""
    files: dict[str, str] = {}
    primary = None
    names = {label: name for name, label in labels.of(s.started).items()}
    for i, (t, judgment) in enumerate(_judgments(s, ended), start=1):
        primary = "respondeo.md" if i == 1 else f"respondeo-{i}.md"
        if judgment is not None:
            files[primary] = rulings.markdown(judgment, _judge_title(t), names)
        else:
            files[primary] = sanitize(t.text) if t.ok else (
                f"# Respondeo\n\nThe judge gave no ruling: {t.failure}: "
                f"{one_line(t.message or '')}\n")
    drafts = [t for t in ended if t.phase == "redactio" and t.ok]
    if drafts:
        primary = "final-report.md"
        files[primary] = header + sanitize(drafts[-1].text).strip() + "\n"
    return files, primary


def _judgments(s: State, ended: list[Turn]) -> list[tuple[Turn, judging.Judgment | None]]:
    """Each ruling (its last attempt) with the judgment its findings make — an unreadable one
    ruled unclear — or None when the judge gave no answer."""
    asked = [t for t in ended if t.phase == "respondeo"]
    again = {t.turn_id.rsplit("/", 1)[0] for t in asked if t.turn_id.endswith("/retry")}
    out: list[tuple[Turn, judging.Judgment | None]] = []
    for t in [t for t in asked if t.turn_id not in again]:
        read = judging.read(t.text, quoted=quoted(s)) if t.ok else None
        if read is not None and isinstance(read.answer, judging.Answer):
            out.append((t, judging.judge([judging.Seat(t.participant, answer=read.answer)],
                                         read.prose)))
        elif read is not None:   # no readable findings, even when asked again: say so
            out.append((t, judging.unclear(read.prose, read.error or "",
                                           [judging.Seat(t.participant,
                                                         failure="unreadable")])))
        else:
            out.append((t, None))
    return out


def _attempt(t: Turn) -> int:
    tail = t.turn_id.rsplit("/attempt-", 1)
    return int(tail[1]) if len(tail) == 2 and tail[1].isdigit() else 1


def _human(actions: list[HumanActed]) -> list[str]:
    """The human's actions as debate.md shows them, a close of the meeting said as such."""
    lines: list[str] = []
    for h in actions:
        if h.action == "pick" and h.choice == CLOSE:
            lines += [f"## The human, after round {h.round}", "", "Closes the meeting.", ""]
        else:
            lines += human_lines([h])
    return lines


def minutes(s: State, m: Meeting) -> str:
    """Where every member stood when the meeting ended, then the meeting by round."""
    lines = ["# Minutes", ""]
    if m.end:
        lines += [f"**The meeting ended:** {describe(s, m)}.", ""]
    else:
        lines += [f"**The meeting has not ended** (round {m.held} of at most "
                  f"{s.max_rounds}).", ""]
    lines += ["## Where the members stood", ""]
    for p in s.participants:
        mine = [(r, seats[p]) for r, seats in enumerate(m.rounds, start=1) if p in seats]
        passed = [r for r, x in mine if x.kind == "passed"]
        spoke = [(r, x) for r, x in mine if x.kind == "spoke"]
        lines += [f"### {p}", ""]
        if p in m.dropped:
            lines += [drop_line(s, mine[-1][1]), ""]
        if passed:
            lines += [f"Passed in round{'s' if len(passed) > 1 else ''} "
                      f"{', '.join(map(str, passed))}.", ""]
        if spoke:
            r, x = spoke[-1]
            lines += [f"Last contribution (round {r}):", "", contribution(x.turn), ""]
        else:
            lines += ["Never spoke.", ""]
    lines += ["## The meeting", "", transcript(s, m, "###"), ""]
    return "\n".join(lines)
