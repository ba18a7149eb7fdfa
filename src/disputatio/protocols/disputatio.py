"""The disputatio protocol: proposals, reaction rounds, respondeo, redactio.

proposals (parallel, blind) → abort unless two succeed → ``rounds`` reaction rounds (parallel,
each on the transcript so far) → respondeo by the judge → redactio by the synthesizer once the
judge rules RESOLVED. ``--continue`` answers re-open respondeo; ``--finalize`` re-drafts.
"""

from __future__ import annotations

from disputatio.protocols.base import (
    RESOLVED,
    DebateState,
    Done,
    Step,
    TurnSpec,
    contribution,
    demote,
    parse_status,
)


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
                     {"quaestio": s.quaestio, "name": p}) for p in missing))
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
                         {"quaestio": s.quaestio, "name": p, "round": str(rnd),
                          "rounds": str(s.rounds), "transcript": transcript})
                for p in missing))
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
            {"quaestio": s.quaestio, "transcript": render_transcript(s, upto_round=s.rounds),
             "ruling": demote(ruling.text.strip(), 3)}),))
    draft = s.turns[did]
    if not draft.ok:
        return Done("failed", f"the synthesizer gave no report ({draft.failure}: "
                              f"{draft.message}); once fixed, `disputatio --resume` asks again")
    return Done("resolved")


def _respondeo_turn(s: DebateState, k: int) -> TurnSpec:
    variables = {"quaestio": s.quaestio, "transcript": render_transcript(s, upto_round=s.rounds)}
    template = "respondeo"
    if k > 1:
        template = "continuation"
        variables["ruling"] = contribution(s.turns.get(respondeo_id(k - 1)))
        variables["answers"] = "\n\n".join(
            f"Answer {i}:\n{a.strip()}" for i, a in enumerate(s.answers, start=1))
    return TurnSpec(respondeo_id(k), s.judge, "judge", "respondeo", k, template, variables)


def render_transcript(s: DebateState, upto_round: int) -> str:
    """The debate so far as agents see it: each contribution under a heading, in order."""
    parts = []
    for p in s.participants:
        parts.append(f"### Proposal — {p}\n\n{contribution(s.turns.get(proposal_id(p)))}")
    for rnd in range(1, upto_round + 1):
        for p in s.participants:
            t = s.turns.get(reaction_id(rnd, p))
            parts.append(f"### Reaction, round {rnd} — {p}\n\n{contribution(t)}")
    return "\n\n".join(parts)
