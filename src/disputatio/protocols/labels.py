"""Judging without bias: neutral labels, a recorded shuffle, recusal. Pure, shared by protocols.

Models recognise and favour their own vendor's work, and the first answer shown tends to win.
So agents never see a participant's name, CLI, vendor or model: every transcript and prompt
calls debaters "Participant A", "Participant B", ... (the mapping is recorded in
``debate_started.labels`` for the human). Each judge reads the answers of a round in an order
shuffled for it from ``debate_started.seed``, so a resumed or replayed debate shows every judge
exactly what it saw before. A judge that shares a vendor (or model) with a debater is recused
when the lineup offers a judge that does not (decided by ``judges.recusal_record`` before the
debate starts, recorded in ``debate_started.recusal``, read here).
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Sequence
from typing import TypeVar

from disputatio.events import DebateStarted

T = TypeVar("T")

PREFIX = "Participant "


def letters(n: int) -> str:
    """A, B, ..., Z, AA, AB, ...: spreadsheet columns, so any lineup has distinct labels."""
    out = ""
    n += 1
    while n:
        n, rem = divmod(n - 1, 26)
        out = string.ascii_uppercase[rem] + out
    return out


def assign(participants: Sequence[str]) -> dict[str, str]:
    """Labels in lineup order: the first debater is Participant A."""
    return {name: PREFIX + letters(i) for i, name in enumerate(participants)}


def of(started: DebateStarted) -> dict[str, str]:
    """The labels a debate uses: as recorded, else (a ledger from before labels) assigned in
    lineup order. A name the record lacks gets the next free letter, never its own name."""
    recorded = dict(started.labels or {})
    out = {}
    taken = set(recorded.values())
    spare = (PREFIX + letters(i) for i in range(10_000))
    for name in started.participants:
        label = recorded.get(name)
        if label is None:
            label = next(x for x in spare if x not in taken)
            taken.add(label)
        out[name] = label
    return out


def shuffled(items: Sequence[T], seed: int, reader: str, place: str) -> list[T]:
    """``items`` in the order ``reader`` sees them at ``place`` (a round): a permutation fixed
    by the recorded seed, so every replay gives the same, and different for each judge and
    each round, so no participant always comes first. Each position is ranked by a sha256 of
    its own (not by ``random``, whose shuffle may change between Python versions), so a
    debate resumed years later reads in the same order."""
    def rank(i: int) -> bytes:
        return hashlib.sha256(f"{seed}\0{reader}\0{place}\0{i}".encode()).digest()

    return [items[i] for i in sorted(range(len(items)), key=rank)]


def recused(started: DebateStarted) -> list[str]:
    """The judges recused when the debate started (none in a ledger from before recusal).
    A protocol seats the others; with one judge, or none free of a conflict, nobody is."""
    return list((started.recusal or {}).get("recused") or [])


def conflicts(started: DebateStarted) -> dict[str, list[str]]:
    """Each judge's conflicts as recorded: the debaters of its vendor (or model)."""
    return {j: list(ds) for j, ds in ((started.recusal or {}).get("conflicts") or {}).items()}
