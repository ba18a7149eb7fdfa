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
from disputatio.protocols import labels, respondeo, rulings
from disputatio.protocols.base import (
    QUAESTIO_BUDGET,
    RESOLVED,
    RULING_BUDGET,
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
    foreign,
    human_lines,
    ruling_message,
)
from disputatio.protocols.disputatio_turns import (  # noqa: F401 (the protocol's names)
    proposal_id,
    reaction_id,
    redactio_id,
    render_transcript,
    respondeo_id,
)
from disputatio.text import one_line, quote, sanitize


class Config(BaseModel):
    """The protocol's settings (the lineup's top-level ``rounds`` key, or ``--rounds``)."""

    # taken as written, like the rest of the lineup: "3" or true is no count
    model_config = ConfigDict(extra="forbid", strict=True)

    rounds: int = Field(default=1, ge=0, le=20)


# recorded in debate_started.settings: the judge answers in judging's structure (a debate
# without it is from before: its rulings' status is read from their first line)
JUDGING = "findings"


def started(config: BaseModel) -> dict[str, Any]:
    """What ``debate_started`` records of the settings."""
    assert isinstance(config, Config)
    return {"rounds": config.rounds, "settings": {"judging": JUDGING}}


@dataclass
class State(DebateState):
    """The debate as this protocol reads it: besides the turns, who judges and drafts, the
    human's answers and the re-drafts asked for."""

    rounds: int = 0
    judge: str | None = "judge"          # None: a lineup without a judge (debate alone)
    synthesizer: str | None = "judge"
    answers: list[str] = field(default_factory=list)
    finalizes: int = 0
    jury: list[tuple[str, float]] = field(default_factory=list)   # besides the judge: weights
    seat_keys: dict[str, str] = field(default_factory=dict)       # juror -> key in lineup.json
    structured: bool = False   # the judge answers in findings (False: an older debate)

    def fold(self, event: EventData) -> None:
        if isinstance(event, DebateStarted):
            self.rounds = event.rounds
            self.judge = event.judge
            self.synthesizer = event.synthesizer
            self.jury = [(j["name"], float(j.get("weight", 1))) for j in event.jury or []]
            self.seat_keys = {j["name"]: j["seat"] for j in event.jury or []}
            self.structured = (event.settings or {}).get("judging") == JUDGING
        elif isinstance(event, AnswersGiven):
            self.answers.append(event.answers)
        elif isinstance(event, FinalizeRequested):
            self.finalizes += 1

    def latest_status(self) -> str | None:
        """The newest verdict, or None before the judge has ruled (or when it failed)."""
        if self.judge is None:
            return None
        w = respondeo.walk(self)
        if isinstance(w.next, Done) and w.next.status == "failed" or w.last is None:
            return None
        if w.last.new_ground and isinstance(w.next, Step):   # provisional: rules again first
            return None
        return w.last.status


def state(events: Iterable[Any]) -> State:
    return State.from_events(events)


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
                               "a debate needs at least two (once fixed, `disputatio resume` "
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
    ask = _ask_human(s, s.rounds)
    if respondeo_id(1) not in s.turns and ask is not None:
        return ask
    w = respondeo.walk(s)
    if w.next is not None:
        return w.next
    last = w.rulings[-1]
    verdict = last.judgment
    assert verdict is not None
    if verdict.status != RESOLVED:
        return Done(verdict.status.lower())
    did = redactio_id(last.n, s.finalizes)
    if did not in s.turns:
        # by labels only, as the judges wrote it, and the judges by number: no name reaches
        # an agent's prompt
        ruling = rulings.markdown(rulings.anonymous(verdict), "The ruling", None,
                                  s.turns[last.turns[0]].text)
        return Step("redactio", (TurnSpec(
            did, s.synthesizer or s.judge, "synthesizer", "redactio", last.n, "redactio",
            {"quaestio": _quaestio(s), "transcript": render_transcript(
                s, upto_round=last.upto_round, reader=s.synthesizer or s.judge),
             "ruling": foreign(ruling, RULING_BUDGET)}),))
    draft = s.turns[did]
    if not draft.ok:
        return Done("failed", f"the synthesizer gave no report ({draft.failure}: "
                              f"{draft.message}); once fixed, `disputatio resume` asks again")
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


def _quaestio(s: State) -> str:
    return foreign(s.quaestio, QUAESTIO_BUDGET)


# --- the protocol's policy, as app asks for it ------------------------------------------------

def lineup_line(s: State) -> str:
    """Who takes part, for the progress header (a recused judge said to be so)."""
    away = set(labels.recused(s.started))

    def judge(name: str) -> str:
        return f"{name} (recused)" if name in away else name

    jury = f" · jury {', '.join(judge(n) for n, _ in s.jury)}" if s.jury else ""
    return ", ".join(s.participants) + (f" · judge {judge(s.judge)}{jury}" if s.judge
                                        else " · no judge")


def seats(s: State) -> list[SeatSpec]:
    """The judge, the jurors and the synthesizer (when another participant), all under the
    budget."""
    if s.judge is None:   # a lineup without a judge: the debaters only
        return []
    out = [SeatSpec(s.judge, "judge", True)]
    out += [SeatSpec(name, s.seat_keys[name], True) for name, _ in s.jury]
    if s.synthesizer is not None and s.synthesizer != s.judge:
        out.append(SeatSpec(s.synthesizer, "synthesizer", True))
    return out


def places(s: State, request: EventData | None) -> Places:
    """Debaters and the synthesizer work in checkouts; the judges rule on the transcript in
    an empty directory (unless one also drafts). A re-draft brings back only the judges and the
    synthesizer; answers bring back the debaters too (the judge may find that the answers open
    new ground, which the debaters then argue), unless the debate is from before findings.
    A recused judge rules on nothing and gets no directory."""
    reopened = isinstance(request, FinalizeRequested) or \
        isinstance(request, AnswersGiven) and not s.structured
    no_repo = {s.judge} if s.judge and s.judge != s.synthesizer else set()
    wanted = [s.synthesizer] if reopened else [*s.participants, s.synthesizer]
    names = [n for n in wanted if n is not None]
    away = set(labels.recused(s.started))
    for judge in ([s.judge, *(name for name, _ in s.jury)] if s.judge is not None else []):
        if judge not in names and judge not in away:
            names.append(judge)
            no_repo.add(judge)
    return Places(tuple(names), frozenset(no_repo))


def released(s: State, step: Step) -> list[str]:
    """Once the judge works, the debaters are finished: their checkouts can go (on a
    ``--continue`` they stay until the report: the answers may send them back to argue)."""
    if step.phase == "redactio" or step.phase in ("respondeo", "jury") and not s.answers:
        return [p for p in s.participants if p != s.synthesizer]
    return []


def retry(s: State, done: Done) -> list[str] | None:
    """The failed turns a debate that stopped on them runs again on resume (too few proposals,
    no ruling, no report); None: the debate ended as it should, there is nothing to resume.
    A juror's failure stopped nothing: it stays recorded in the ruling it was part of."""
    phases = {"aborted": ("proposal",), "failed": ("respondeo", "redactio")}.get(done.status)
    if phases is None:
        return None
    return [t.turn_id for t in s.turns.values()
            if not t.ok and t.phase in phases and t.seat != "juror"]


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
            raise Refused("the judge has not ruled yet; run `disputatio resume`")
        if status == RESOLVED:
            raise Refused("the debate is already resolved; run `disputatio finalize` to "
                          "re-draft the report")
        return AnswersGiven(answers=answers)
    if request == "finalize":
        if status != RESOLVED:
            what = "has not ruled yet" if status is None else f"ruled {status}"
            raise Refused(f"cannot finalize: the judge {what}; answer with `disputatio "
                          "continue \"...\"` first" if status else
                          f"cannot finalize: the judge {what}; run `disputatio resume`")
        return FinalizeRequested()
    raise Refused(f"the disputatio protocol has no {request}")


def ending(done: Done, primary: str) -> Ending:
    """Aborted and failed debates fail the command; a judge who needs the human does not."""
    failed = done.status in ("aborted", "failed")
    said = ruling_message(done.status, primary)
    return Ending(failed, said if said is not None else done.reason if failed else "")


# --- how its debate reads -------------------------------------------------------------------

TITLES = {"proposal": "Proposal", "reaction": "Reaction", "respondeo": "Respondeo",
          "redactio": "Redactio"}
_RANK = {"proposal": 0, "reaction": 1, "respondeo": 2, "redactio": 2}


def presentation(s: State) -> Presentation:
    w = respondeo.walk(s) if s.judge is not None else None
    # the human's answers, shown before the first ruling that read each of them
    answered_by = {f"{respondeo_id(r.n)}": r.answers for r in (w.rulings if w else [])
                   if r.answers and not r.reengaged}
    unshown = list(s.human)

    def interlude(t: Turn) -> list[str]:
        """The human in the loop's actions before the round that followed them; a ruling
        after the human's answers follows them."""
        lines: list[str] = []
        before = t.round if t.phase == "reaction" else s.rounds + 1
        if t.phase != "proposal":
            due = [h for h in unshown if h.round < before]
            for h in due:
                unshown.remove(h)
            lines += human_lines(due)
        j = answered_by.get(t.turn_id)
        if j and j <= len(s.answers):
            lines += ["## The human's answers", "", quote(s.answers[j - 1].strip()), ""]
        return lines

    # after the reactions, turns read in the order they ran, a ruling's judges together
    first: dict[str, int] = {}
    for i, tid in enumerate(s.order):
        first.setdefault(_group(s.turns[tid], s.rounds), i)

    def order(t: Turn, participants: list[str]) -> tuple:
        """Proposals, then reaction rounds, debaters in lineup order (parallel turns finish in
        any order); then rulings, rounds on the answers and reports as they came."""
        who = participants.index(t.participant) if t.participant in participants \
            else len(participants)
        if t.phase == "proposal" or t.phase == "reaction" and t.round <= s.rounds:
            return (_RANK.get(t.phase, 3), t.round, 0, who, t.turn_id)
        return (2, first.get(_group(t, s.rounds), len(s.order)), t.turn_id.count("/"), who,
                t.turn_id)

    names = {label: name for name, label in labels.of(s.started).items()}
    last = w.last if w else None
    extra: dict[str, Any] = {} if last is None else {
        "judgment": {**rulings.record(last), "recused": labels.recused(s.started)},
        "findings": rulings.findings(last, names)}
    # reaction rounds that ran, those after the human's answers included
    extra["rounds_held"] = max((t.round for t in s.turns.values() if t.phase == "reaction"),
                               default=0)
    return Presentation(verdict=s.latest_status(), title=lambda t: _title(t, s.rounds),
                        order=order, interlude=interlude, where=_where,
                        documents=lambda ended, header: _documents(s, w, names, ended, header),
                        extra=extra)


def _recused(s: State) -> str:
    """The line a ruling opens with when judges were recused: who, and for sharing what."""
    found, mode = labels.conflicts(s.started), (s.started.recusal or {}).get("mode")
    shared = "a vendor" if mode == "vendor" else "its model"
    return "".join(f"_Judge {one_line(j, 200)} was recused: it shares {shared} with "
                   f"{one_line(', '.join(found.get(j, [])), 400)} (recusal: {mode})._\n\n"
                   for j in labels.recused(s.started))


def _group(t: Turn, rounds: int) -> str:
    if t.phase == "reaction":
        return f"reaction-{t.round}"
    return t.turn_id.split("/")[0]


def _where(t: Turn) -> str:
    return t.phase if t.phase != "reaction" else f"reaction round {t.round}"


def _title(t: Turn, rounds: int) -> str:
    title = TITLES.get(t.phase, t.phase)
    if t.phase == "reaction":
        title += f", round {t.round}" + (" (on the human's answers)" if t.round > rounds else "")
    elif t.phase == "respondeo":
        title += f" {t.round}" if t.round > 1 else ""
        title += ", juror" if t.seat == "juror" else ""
        title += ", asked again" if t.turn_id.endswith(f"/{respondeo.RETRY}") else ""
    elif t.phase == "redactio" and "." in t.turn_id:
        title += f", re-draft {t.turn_id.rsplit('.', 1)[1]}"
    return title


def _documents(s: State, w: respondeo.Walk | None, names: dict[str, str], ended: list[Turn],
               header: str) -> tuple[dict[str, str], str | None]:
    """respondeo.md, respondeo-2.md, ... (one per ruling, rendered from its judgment) and
    final-report.md (the latest report drafted); the primary is the report, else the latest
    ruling."""
    files: dict[str, str] = {}
    primary = None
    held = w.rulings if w else []
    stop = w.next if w else None
    for r in held:
        name = "respondeo.md" if r.n == 1 else f"respondeo-{r.n}.md"
        title = "Respondeo" if r.n == 1 else f"Respondeo {r.n}"
        if r.judgment is not None:
            text = rulings.markdown(r.judgment, title, names,
                                    s.turns[r.turns[0]].text if r.turns else "")
            files[name] = text.replace(f"# {title}\n\n", f"# {title}\n\n{_recused(s)}", 1)
        elif r is held[-1] and isinstance(stop, Done):
            files[name] = f"# {title}\n\n{one_line(stop.reason, 1000)}\n"
        else:
            continue
        primary = name
    drafts = [t for t in ended if t.phase == "redactio" and t.ok]
    if drafts:
        files["final-report.md"] = header + sanitize(drafts[-1].text).strip() + "\n"
        primary = "final-report.md"
    return files, primary
