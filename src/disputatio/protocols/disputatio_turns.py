"""The disputatio protocol's turn ids and the transcript its agents read, shared by its rules
(``disputatio``, which imports its rulings) and its rulings (``respondeo``), so that the
rulings need not import the rules back. Pure."""

from __future__ import annotations

from disputatio.protocols import labels
from disputatio.protocols.base import (
    TRANSCRIPT_BUDGET,
    DebateState,
    Turn,
    answered,
    contribution,
    human_notes,
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


def render_transcript(s: DebateState, upto_round: int, reader: str | None = None) -> str:
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
