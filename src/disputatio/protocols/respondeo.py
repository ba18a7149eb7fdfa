"""The disputatio protocol's respondeo, from the end of the reactions to the last ruling.

Ruling n: the judge answers in the structure of ``judging`` (an unreadable answer is asked
again once, with the reason, under a new turn id, then the ruling is ``unclear``); with a jury,
the judge's findings fix the points and every other judge rules on them on its own; the
verdict is computed from the votes. The human's answers (``--continue``) open the next
ruling; when that ruling says they open new ground, the debaters argue them in one more
reaction round, and the judge rules again. Pure: the state in, the step or the judgments out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from disputatio.protocols import disputatio_turns as d
from disputatio.protocols import judging, labels
from disputatio.protocols.base import (
    ANSWERS_BUDGET,
    QUAESTIO_BUDGET,
    RULING_BUDGET,
    Done,
    Step,
    Turn,
    TurnSpec,
    answered,
    contribution,
    foreign,
    parse_status,
)
from disputatio.protocols.judging import Judgment, Seat
from disputatio.protocols.rulings import points

RETRY = "retry"


@dataclass
class Ruling:
    """One ruling as far as it went: its number, the human's answers it saw, whether the
    debaters argued them first, and its judgment (None until every judge has answered)."""

    n: int
    answers: int
    upto_round: int
    reengaged: bool = False
    judgment: Judgment | None = None
    turns: list[str] = field(default_factory=list)   # the turns it took, judge first


@dataclass
class Walk:
    rulings: list[Ruling]
    next: Step | Done | None   # None: the last ruling stands

    @property
    def last(self) -> Judgment | None:
        done = [r.judgment for r in self.rulings if r.judgment is not None]
        return done[-1] if done else None


def walk(s) -> Walk:
    """Every ruling the ledger holds, in order, and what runs next."""
    rulings: list[Ruling] = []
    seen, extra, after_round = 0, 0, False
    while True:
        r = Ruling(len(rulings) + 1, seen, s.rounds + extra, reengaged=after_round)
        rulings.append(r)
        got = _rule(s, r)
        if got is not None:
            return Walk(rulings, got)
        assert r.judgment is not None
        after_round = r.judgment.new_ground and seen > 0 and not r.reengaged
        if after_round:
            extra += 1
            step = _reengage(s, rulings, seen, s.rounds + extra)
            if step is not None:
                return Walk(rulings, step)
        elif len(s.answers) > seen:
            seen += 1
        else:
            return Walk(rulings, None)


def judges(s) -> list[tuple[str, float]]:
    """Who rules, in order, with their weight: the judge and the jurors, less the recused
    (the first of them fixes the points)."""
    out = [(s.judge, 1.0), *s.jury]
    away = set(labels.recused(s.started))
    return [x for x in out if x[0] not in away] or out


def _rule(s, r: Ruling) -> Step | Done | None:
    """Ruling ``r``'s next turns, or a stop, or None with ``r.judgment`` filled in."""
    seats = judges(s)
    clerk, weight = seats[0]
    first = _answer(s, r, clerk, d.respondeo_id(r.n), "judge", None)
    if not isinstance(first, tuple):
        return first
    found, turns = first
    r.turns += turns
    if found.answer is None:
        r.judgment = judging.unclear(found.prose, found.error or "", [Seat(clerk, weight, None,
                                                                           "unreadable")])
        return None
    if isinstance(found.answer, str):   # a ruling from before the structure
        r.judgment = Judgment(parse_status(found.answer), prose=found.answer, legacy=True,
                              seats=[Seat(clerk, weight)])
        return None
    ballots = [Seat(clerk, weight, found.answer)]
    if found.answer.new_ground and r.answers and not r.reengaged:
        r.judgment = judging.judge(ballots, found.prose)   # provisional: the debaters go first
        return None
    pending: list[TurnSpec] = []
    for name, w in seats[1:]:
        got = _answer(s, r, name, f"{d.respondeo_id(r.n)}/{name}", "juror", found.answer)
        if isinstance(got, Step):
            pending += got.turns
            continue
        if isinstance(got, Done):   # a juror that fails is recorded, not waited for
            tid = f"{d.respondeo_id(r.n)}/{name}"
            bad = s.turns.get(f"{tid}/{RETRY}") or s.turns[tid]
            ballots.append(Seat(name, w, None, f"failed ({bad.failure})"))
            continue
        vote, turns = got
        r.turns += turns
        ballots.append(Seat(name, w, vote.answer, None if vote.answer else "unreadable"))
    if pending:
        return Step("jury", tuple(pending))
    r.judgment = judging.judge(ballots, found.prose)
    r.judgment.new_ground = False   # asked once per answers only: not acted on again
    return None


@dataclass(frozen=True)
class _Found:
    answer: object   # judging.Answer / Ballot, a legacy ruling's text, or None: unreadable
    prose: str
    error: str | None = None


def _answer(s, r: Ruling, who: str, tid: str, role: str, fixed) -> tuple | Step | Done:
    """One judge's answer to ruling ``r``: read, or asked again once; a failed turn stops the
    ruling (the judge's) or is reported (a juror's)."""
    model = judging.Ballot if role == "juror" else judging.Answer
    turn = s.turns.get(tid)
    if turn is None:
        return Step("respondeo" if role == "judge" else "jury",
                    (_spec(s, r, who, tid, role, fixed, None),))
    if not turn.ok:
        return _failed(turn)
    quoted = _quoted(s)
    read = judging.read(turn.text, model, quoted)
    if read.answer is not None:
        return _Found(read.answer, read.prose), [tid]
    if role == "judge" and not s.structured:   # a debate from before findings: as it was read
        return _Found(turn.text, ""), [tid]
    again = s.turns.get(f"{tid}/{RETRY}")
    if again is None:
        return Step("respondeo" if role == "judge" else "jury",
                    (_spec(s, r, who, f"{tid}/{RETRY}", role, fixed, (turn, read.error)),))
    if not again.ok:
        return _failed(again)
    second = judging.read(again.text, model, quoted)
    return _Found(second.answer, second.prose or read.prose, second.error), [tid, again.turn_id]


def _quoted(s) -> list[str]:
    """What a judge may quote but never rule by: the question and the debaters' answers."""
    return [s.quaestio, *(t.text for t in s.turns.values()
                          if t.ok and t.participant in s.participants)]


def _failed(turn: Turn) -> Done:
    return Done("failed", f"the judge gave no ruling ({turn.failure}: {turn.message}); once "
                          "fixed, `disputatio resume` asks it again")


def _spec(s, r: Ruling, who: str, tid: str, role: str, fixed, retry) -> TurnSpec:
    v = {"quaestio": _quaestio(s), "again": again(*retry) if retry else "",
         "transcript": d.render_transcript(s, upto_round=r.upto_round, reader=who)}
    if role == "juror":
        v["points"] = points(fixed.findings)
        v["answers"] = (f"\n## The human's answers\n\n{_answers(s, r.answers)}\n"
                        if r.answers else "")
        return TurnSpec(tid, who, "juror", "respondeo", r.n, "jury", v)
    template = "respondeo"
    if r.answers:
        template = "continuation"
        previous = _previous(s, r)
        v["ruling"] = contribution(previous, RULING_BUDGET)
        v["answers"] = _answers(s, r.answers)
        v["new_ground"] = (
            "false: the debaters have argued the answers already (the last round of the "
            "debate); rule on everything now" if r.reengaged else
            "true when the answers raise matters the debaters never argued: they then argue "
            "them in one more round before you rule again (your findings now are "
            "provisional); else false")
    return TurnSpec(tid, who, "judge", "respondeo", r.n, template, v)


def again(turn: Turn, error: str | None) -> str:
    """The end of a prompt that asks a judge again: why its answer was refused, and the answer."""
    return ("\n## Your previous answer could not be read\n\n"
            f"It was rejected for this reason: {error}\n\n"
            "Here it is; answer again, ending with the fenced ```json block in the shape "
            f"above.\n\n{contribution(turn, RULING_BUDGET)}\n")


def _previous(s, r: Ruling) -> Turn | None:
    """The judge's answer to the ruling before ``r`` (its retry, when it was asked again)."""
    before = d.respondeo_id(r.n - 1)
    again = s.turns.get(f"{before}/{RETRY}")
    return again if answered(again) else s.turns.get(before)


def _answers(s, upto: int) -> str:
    share = ANSWERS_BUDGET // max(1, upto)
    return "\n\n".join(f"Answer {i}:\n\n{foreign(a, share)}"
                       for i, a in enumerate(s.answers[:upto], start=1))


def _reengage(s, rulings: list[Ruling], seen: int, rnd: int) -> Step | None:
    """The debaters' round on the human's answers (those whose proposal stood), shown the
    questions of the ruling the answers replied to."""
    who = [p for p in s.participants if answered(s.turns.get(d.proposal_id(p)))]
    missing = [p for p in who if d.reaction_id(rnd, p) not in s.turns]
    if not missing:
        return None
    asked = next((r.judgment for r in reversed(rulings)
                  if r.answers == seen - 1 and r.judgment is not None), None)
    questions = "\n".join(f"{i}. {q}" for i, q in enumerate(asked.questions, start=1)) \
        if asked is not None and asked.questions else "(none recorded)"
    names = labels.of(s.started)
    v = {"quaestio": _quaestio(s), "questions": foreign(questions, ANSWERS_BUDGET),
         "answers": _answers(s, seen), "round": str(rnd)}
    return Step("reactions on the answers", tuple(
        TurnSpec(d.reaction_id(rnd, p), p, "participant", "reaction", rnd, "reengage",
                 {**v, "label": names[p],
                  "transcript": d.render_transcript(s, upto_round=rnd - 1)})
        for p in missing))


def _quaestio(s) -> str:
    return foreign(s.quaestio, QUAESTIO_BUDGET)
