"""The disputatio protocol: proposals, reaction rounds, respondeo, redactio.

proposals (parallel, blind) → abort unless two succeed → ``rounds`` reaction rounds (parallel,
each on the transcript so far) → respondeo by the judge → redactio by the synthesizer once the
judge rules RESOLVED; a lineup without a judge ends after the reactions (``debated``).
``--continue`` answers re-open respondeo; ``--finalize`` re-drafts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from disputatio.events import AnswersGiven, DebateStarted, EventData, FinalizeRequested
from disputatio.protocols import labels
from disputatio.protocols.base import (
    ANSWERS_BUDGET,
    QUAESTIO_BUDGET,
    RESOLVED,
    RULING_BUDGET,
    TRANSCRIPT_BUDGET,
    Ask,
    DebateState,
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
    human_lines,
    human_notes,
    parse_status,
)
from disputatio.text import fair_caps, one_line, quote, sanitize


class Config(BaseModel):
    """The protocol's settings (the lineup's top-level ``rounds`` key, or ``--rounds``)."""

    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(default=1, ge=0, le=20)


def started(config: BaseModel) -> dict[str, Any]:
    """What ``debate_started`` records of the settings."""
    assert isinstance(config, Config)
    return {"rounds": config.rounds}


@dataclass
class State(DebateState):
    """The debate as this protocol reads it: besides the turns, who judges and drafts, the
    human's answers and the re-drafts asked for."""

    rounds: int = 0
    judge: str | None = "judge"          # None: a lineup without a judge (debate alone)
    synthesizer: str | None = "judge"
    answers: list[str] = field(default_factory=list)
    finalizes: int = 0

    def fold(self, event: EventData) -> None:
        if isinstance(event, DebateStarted):
            self.rounds = event.rounds
            self.judge = event.judge
            self.synthesizer = event.synthesizer
        elif isinstance(event, AnswersGiven):
            self.answers.append(event.answers)
        elif isinstance(event, FinalizeRequested):
            self.finalizes += 1

    def respondeo_ids(self) -> list[str]:
        return [t for t in self.order if self.turns[t].phase == "respondeo"]

    def latest_status(self) -> str | None:
        """The newest ruling's status, or None before the judge has ruled (or when it failed)."""
        ids = self.respondeo_ids()
        if not ids or not self.turns[ids[-1]].ok:
            return None
        return parse_status(self.turns[ids[-1]].text)


def state(events: Iterable[Any]) -> State:
    return State.from_events(events)


def proposal_id(name: str) -> str:
    return f"proposal/{name}"


def reaction_id(rnd: int, name: str) -> str:
    return f"reaction-{rnd}/{name}"


def respondeo_id(k: int) -> str:
    return f"respondeo-{k}"


def redactio_id(k: int, f: int) -> str:
    return f"redactio-{k}" + (f".{f}" if f else "")


def next_step(s: State) -> Step | Ask | Done:
    names = labels.of(s.started)
    missing = [p for p in s.participants if proposal_id(p) not in s.turns]
    if missing:
        return Step("proposals", tuple(
            TurnSpec(proposal_id(p), p, "participant", "proposal", 0, "proposal",
                     {"quaestio": _quaestio(s), "label": names[p]}) for p in missing))
    ok = [p for p in s.participants if s.turns[proposal_id(p)].ok]
    if len(ok) < 2:
        return Done("aborted", f"only {len(ok)} of {len(s.participants)} proposals succeeded; "
                               "a debate needs at least two (once fixed, `disputatio --resume` "
                               "retries the failed ones)")
    for rnd in range(1, s.rounds + 1):
        missing = [p for p in s.participants if reaction_id(rnd, p) not in s.turns]
        ask = _ask_human(s, rnd - 1)
        if missing and ask is not None:
            return ask
        if missing:
            transcript = render_transcript(s, upto_round=rnd - 1)
            return Step(f"reactions {rnd}/{s.rounds}", tuple(
                TurnSpec(reaction_id(rnd, p), p, "participant", "reaction", rnd, "reaction",
                         {"quaestio": _quaestio(s), "label": names[p], "round": str(rnd),
                          "rounds": str(s.rounds), "transcript": transcript})
                for p in missing))
    if s.judge is None:
        return Done("debated", "the lineup has no judge: the debate ends after the reactions")
    k = len(s.answers) + 1
    ask = _ask_human(s, s.rounds)
    if k == 1 and respondeo_id(1) not in s.turns and ask is not None:
        return ask
    rid = respondeo_id(k)
    if rid not in s.turns:
        return Step("respondeo", (_respondeo_turn(s, s.judge, k),))
    ruling = s.turns[rid]
    if not ruling.ok:
        return Done("failed", f"the judge gave no ruling ({ruling.failure}: {ruling.message}); "
                              "once fixed, `disputatio --resume` asks it again")
    status = parse_status(ruling.text)
    if status != RESOLVED:
        return Done(status.lower())
    did = redactio_id(k, s.finalizes)
    if did not in s.turns:
        return Step("redactio", (TurnSpec(
            did, s.synthesizer or s.judge, "synthesizer", "redactio", k, "redactio",
            {"quaestio": _quaestio(s), "transcript": render_transcript(
                s, upto_round=s.rounds, reader=s.synthesizer or s.judge),
             "ruling": foreign(ruling.text, RULING_BUDGET)}),))
    draft = s.turns[did]
    if not draft.ok:
        return Done("failed", f"the synthesizer gave no report ({draft.failure}: "
                              f"{draft.message}); once fixed, `disputatio --resume` asks again")
    return Done("resolved")


def _ask_human(s: State, rnd: int) -> Ask | None:
    """With a human in the loop, after the proposals (round 0) and after each reaction round:
    agree with a debater, skip, or steer the next round (and the judge)."""
    key = f"round-{rnd}"
    if not s.asks_human or s.acted(key) is not None:
        return None
    ids = [proposal_id(p) if rnd == 0 else reaction_id(rnd, p) for p in s.participants]
    latest = tuple((s.turns[t].participant, s.turns[t].text) for t in ids
                   if answered(s.turns.get(t)))
    title = "The proposals are in" if rnd == 0 else f"Reaction round {rnd} is over"
    return Ask(key, rnd, title, participants=tuple(s.participants), latest=latest)


def _respondeo_turn(s: State, judge: str, k: int) -> TurnSpec:
    variables = {"quaestio": _quaestio(s),
                 "transcript": render_transcript(s, upto_round=s.rounds, reader=judge)}
    template = "respondeo"
    if k > 1:
        template = "continuation"
        previous = s.turns.get(respondeo_id(k - 1))
        variables["ruling"] = contribution(previous, RULING_BUDGET)
        share = ANSWERS_BUDGET // len(s.answers)
        variables["answers"] = "\n\n".join(
            f"Answer {i}:\n\n{foreign(a, share)}" for i, a in enumerate(s.answers, start=1))
    return TurnSpec(respondeo_id(k), judge, "judge", "respondeo", k, template, variables)


def _quaestio(s: State) -> str:
    return foreign(s.quaestio, QUAESTIO_BUDGET)


def render_transcript(s: State, upto_round: int, reader: str | None = None) -> str:
    """The debate so far as agents see it: each contribution quoted under a heading of ours,
    debaters by their labels only, the whole within ``TRANSCRIPT_BUDGET`` characters (long
    answers are cut evenly).

    Chronological and append-only, so the transcript of one round starts with the transcript
    of the round before, byte for byte, and a provider's prefix cache serves it again: round by
    round, the human's actions right after the round they followed. Debaters read each round in
    label order; a ``reader`` that judges reads it in the order shuffled for it."""
    names = labels.of(s.started)
    seed = s.started.seed or 0
    blocks: list[tuple[list[tuple[str, Turn | None]], str]] = []
    for rnd in range(upto_round + 1):
        ids = [(p, proposal_id(p) if rnd == 0 else reaction_id(rnd, p)) for p in s.participants]
        if reader is not None:
            ids = labels.shuffled(ids, seed, reader, f"round-{rnd}")
        title = "Proposal" if rnd == 0 else f"Reaction, round {rnd}"
        notes = human_notes((h for h in s.human if h.round == rnd), names)
        blocks.append(([(f"{title} — {names[p]}", s.turns.get(t)) for p, t in ids], notes))
    entries = [e for block, _ in blocks for e in block]
    lengths = [len(t.text.strip()) if answered(t) else 0 for _, t in entries]
    caps = iter(fair_caps(lengths, TRANSCRIPT_BUDGET))
    parts = []
    for block, notes in blocks:
        parts += [f"### {title}\n\n{contribution(t, next(caps))}" for title, t in block]
        if notes:
            parts.append(f"### The human in the loop\n\n{notes}")
    return "\n\n".join(parts)


# --- the protocol's policy, as app asks for it ------------------------------------------------

def lineup_line(s: State) -> str:
    """Who takes part, for the progress header."""
    return ", ".join(s.participants) + (f" · judge {s.judge}" if s.judge else " · no judge")


def seats(s: State) -> list[SeatSpec]:
    """The judge and the synthesizer (when another participant), both under the budget."""
    if s.judge is None:   # a lineup without a judge: the debaters only
        return []
    out = [SeatSpec(s.judge, "judge", True)]
    if s.synthesizer is not None and s.synthesizer != s.judge:
        out.append(SeatSpec(s.synthesizer, "synthesizer", True))
    return out


def places(s: State, request: EventData | None) -> Places:
    """Debaters and the synthesizer work in checkouts; the judge rules on the transcript in an
    empty directory (unless it also drafts). Answers or a re-draft bring back only the judge
    and the synthesizer."""
    reopened = isinstance(request, AnswersGiven | FinalizeRequested)
    no_repo = {s.judge} if s.judge and s.judge != s.synthesizer else set()
    wanted = [s.synthesizer] if reopened else [*s.participants, s.synthesizer]
    names = [n for n in wanted if n is not None]
    if s.judge is not None and s.judge not in names:
        names.append(s.judge)
        no_repo.add(s.judge)
    return Places(tuple(names), frozenset(no_repo))


def released(s: State, step: Step) -> list[str]:
    """Once the judge works, the debaters are finished: their checkouts can go."""
    if step.phase in ("respondeo", "redactio"):
        return [p for p in s.participants if p != s.synthesizer]
    return []


def retry(s: State, done: Done) -> list[str] | None:
    """The failed turns a debate that stopped on them runs again on resume (too few proposals,
    no ruling, no report); None: the debate ended as it should, there is nothing to resume."""
    phases = {"aborted": ("proposal",), "failed": ("respondeo", "redactio")}.get(done.status)
    if phases is None:
        return None
    return [t.turn_id for t in s.turns.values() if not t.ok and t.phase in phases]


def accept(s: State, request: str, answers: str = "") -> EventData:
    """The event that ``continue`` (the human's answers) or ``finalize`` (a re-draft) appends,
    or ``Refused`` with why it cannot be had now."""
    if s.judge is None:
        what = ("there are no questions to answer" if request == "continue"
                else "there is no ruling to draft a report from")
        raise Refused(f"this debate ran without a judge, so {what}; add a 'judge:' to the "
                      "lineup and start a new debate")
    status = s.latest_status()
    if request == "continue":
        if status is None:
            raise Refused("the judge has not ruled yet; use --resume")
        if status == RESOLVED:
            raise Refused("the debate is already resolved; use --finalize to re-draft the "
                          "report")
        return AnswersGiven(answers=answers)
    if request == "finalize":
        if status != RESOLVED:
            what = "has not ruled yet" if status is None else f"ruled {status}"
            raise Refused(f"cannot finalize: the judge {what}; answer with --continue "
                          "\"...\" first" if status else
                          f"cannot finalize: the judge {what}; use --resume")
        return FinalizeRequested()
    raise Refused(f"the disputatio protocol has no {request}")


def ending(done: Done, primary: str) -> Ending:
    """Aborted and failed debates fail the command; a judge who needs the human does not."""
    failed = done.status in ("aborted", "failed")
    if done.status == "needs_input":
        return Ending(failed, f"the judge needs your input: read {primary}, then answer with "
                              "disputatio --continue \"...\"")
    if done.status == "unclear":
        return Ending(failed, f"the judge's ruling has no clear STATUS line: read {primary}; "
                              "answer with disputatio --continue \"...\" to ask again")
    return Ending(failed, done.reason if failed else "")


# --- how its debate reads -------------------------------------------------------------------

TITLES = {"proposal": "Proposal", "reaction": "Reaction", "respondeo": "Respondeo",
          "redactio": "Redactio"}
_RANK = {"proposal": 0, "reaction": 1, "respondeo": 2, "redactio": 2}


def presentation(s: State) -> Presentation:
    answers = iter(s.answers)

    unshown = list(s.human)

    def interlude(t: Turn) -> list[str]:
        """The human in the loop's actions before the round that followed them; each ruling
        after the first follows the answers it was given."""
        lines: list[str] = []
        before = t.round if t.phase == "reaction" else s.rounds + 1
        if t.phase != "proposal":
            due = [h for h in unshown if h.round < before]
            for h in due:
                unshown.remove(h)
            lines += human_lines(due)
        if t.phase == "respondeo" and t.round > 1:
            lines += ["## The human's answers", "", quote(next(answers, "").strip()), ""]
        return lines

    return Presentation(verdict=s.latest_status(), title=_title, order=_order,
                        interlude=interlude, where=_where, documents=_documents)


def _where(t: Turn) -> str:
    return t.phase if t.phase != "reaction" else f"reaction round {t.round}"


def _title(t: Turn) -> str:
    title = TITLES.get(t.phase, t.phase)
    if t.phase == "reaction":
        title += f", round {t.round}"
    elif t.phase == "respondeo" and t.round > 1:
        title += f" {t.round}"
    elif t.phase == "redactio" and "." in t.turn_id:
        title += f", re-draft {t.turn_id.rsplit('.', 1)[1]}"
    return title


def _order(t: Turn, participants: list[str]) -> tuple:
    """By phase and round, debaters in lineup order, a ruling before the report drafted from
    it (parallel turns finish in any order)."""
    who = participants.index(t.participant) if t.participant in participants \
        else len(participants)
    return (_RANK.get(t.phase, 3), t.round, t.phase == "redactio", who, t.turn_id)


def _documents(ended: list[Turn], header: str) -> tuple[dict[str, str], str | None]:
    """respondeo.md, respondeo-2.md, ... (one per ruling) and final-report.md (the latest
    report drafted); the primary is the report, else the latest ruling."""
    files: dict[str, str] = {}
    primary = None
    rulings = [t for t in ended if t.phase == "respondeo"]
    for i, t in enumerate(rulings, start=1):
        name = "respondeo.md" if i == 1 else f"respondeo-{i}.md"
        files[name] = sanitize(t.text) if t.ok else \
            f"# Respondeo\n\nThe judge gave no ruling: {t.failure}: {one_line(t.message or '')}\n"
        primary = name
    drafts = [t for t in ended if t.phase == "redactio" and t.ok]
    if drafts:
        files["final-report.md"] = header + sanitize(drafts[-1].text).strip() + "\n"
        primary = "final-report.md"
    return files, primary
