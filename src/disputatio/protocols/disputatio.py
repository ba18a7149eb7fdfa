"""The disputatio protocol: proposals, reaction rounds, respondeo, redactio.

proposals (parallel, blind) → abort unless two succeed → ``rounds`` reaction rounds (parallel,
each on the transcript so far) → respondeo by the judge → redactio by the synthesizer once the
judge rules RESOLVED; a lineup without a judge ends after the reactions (``debated``).
``--continue`` answers re-open respondeo; ``--finalize`` re-drafts.
"""

from __future__ import annotations

from disputatio.protocols.base import (
    ANSWERS_BUDGET,
    QUAESTIO_BUDGET,
    RESOLVED,
    RULING_BUDGET,
    TRANSCRIPT_BUDGET,
    DebateState,
    Done,
    Step,
    TurnSpec,
    answered,
    contribution,
    foreign,
    parse_status,
)
from disputatio.text import fair_caps


def proposal_id(name: str) -> str:
    return f"proposal/{name}"


def reaction_id(rnd: int, name: str) -> str:
    return f"reaction-{rnd}/{name}"


def respondeo_id(k: int) -> str:
    return f"respondeo-{k}"


def redactio_id(k: int, f: int) -> str:
    return f"redactio-{k}" + (f".{f}" if f else "")


def next_step(s: DebateState) -> Step | Done:
    missing = [p for p in s.participants if proposal_id(p) not in s.turns]
    if missing:
        return Step("proposals", tuple(
            TurnSpec(proposal_id(p), p, "participant", "proposal", 0, "proposal",
                     {"quaestio": _quaestio(s), "name": p}) for p in missing))
    ok = [p for p in s.participants if s.turns[proposal_id(p)].ok]
    if len(ok) < 2:
        return Done("aborted", f"only {len(ok)} of {len(s.participants)} proposals succeeded; "
                               "a debate needs at least two (once fixed, `disputatio --resume` "
                               "retries the failed ones)")
    for rnd in range(1, s.rounds + 1):
        missing = [p for p in s.participants if reaction_id(rnd, p) not in s.turns]
        if missing:
            transcript = render_transcript(s, upto_round=rnd - 1)
            return Step(f"reactions {rnd}/{s.rounds}", tuple(
                TurnSpec(reaction_id(rnd, p), p, "participant", "reaction", rnd, "reaction",
                         {"quaestio": _quaestio(s), "name": p, "round": str(rnd),
                          "rounds": str(s.rounds), "transcript": transcript})
                for p in missing))
    if s.judge is None:
        return Done("debated", "the lineup has no judge: the debate ends after the reactions")
    k = len(s.answers) + 1
    rid = respondeo_id(k)
    if rid not in s.turns:
        return Step("respondeo", (_respondeo_turn(s, k),))
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
            did, s.synthesizer, "synthesizer", "redactio", k, "redactio",
            {"quaestio": _quaestio(s), "transcript": render_transcript(s, upto_round=s.rounds),
             "ruling": foreign(ruling.text, RULING_BUDGET)}),))
    draft = s.turns[did]
    if not draft.ok:
        return Done("failed", f"the synthesizer gave no report ({draft.failure}: "
                              f"{draft.message}); once fixed, `disputatio --resume` asks again")
    return Done("resolved")


def _respondeo_turn(s: DebateState, k: int) -> TurnSpec:
    variables = {"quaestio": _quaestio(s),
                 "transcript": render_transcript(s, upto_round=s.rounds)}
    template = "respondeo"
    if k > 1:
        template = "continuation"
        previous = s.turns.get(respondeo_id(k - 1))
        variables["ruling"] = contribution(previous, RULING_BUDGET)
        share = ANSWERS_BUDGET // len(s.answers)
        variables["answers"] = "\n\n".join(
            f"Answer {i}:\n\n{foreign(a, share)}" for i, a in enumerate(s.answers, start=1))
    return TurnSpec(respondeo_id(k), s.judge, "judge", "respondeo", k, template, variables)


def _quaestio(s: DebateState) -> str:
    return foreign(s.quaestio, QUAESTIO_BUDGET)


def render_transcript(s: DebateState, upto_round: int) -> str:
    """The debate so far as agents see it: each contribution quoted under a heading of ours, in
    order, the whole within ``TRANSCRIPT_BUDGET`` characters (long answers are cut evenly)."""
    entries = [(f"Proposal — {p}", s.turns.get(proposal_id(p))) for p in s.participants]
    for rnd in range(1, upto_round + 1):
        entries += [(f"Reaction, round {rnd} — {p}", s.turns.get(reaction_id(rnd, p)))
                    for p in s.participants]
    lengths = [len(t.text.strip()) if answered(t) else 0 for _, t in entries]
    caps = fair_caps(lengths, TRANSCRIPT_BUDGET)
    return "\n\n".join(f"### {title}\n\n{contribution(t, cap)}"
                        for (title, t), cap in zip(entries, caps, strict=True))
