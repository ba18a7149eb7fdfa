"""The Wind/Wall/Door protocol's rules over text, deterministic and conservative: each role's
contract (debate-hall's rules: Wind offers options and asks, Wall opens with a verdict and
carries evidence, Door reasons in numbered steps), a vote, a mediator's pick, Door's call for
the vote. Nothing here guesses: an answer that does not say it plainly does not count."""

from __future__ import annotations

import re

APPROVE, REJECT = "APPROVE", "REJECT"

_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+\S", re.M)
_STEP = re.compile(r"^\s*\d+[.)]\s+\S", re.M)
_EVIDENCE = re.compile(r"^[\s#>*_\[]*evidence\b", re.I | re.M)
CALL = re.compile(r"^[\s#>*_]*call the vote[\s*_.!]*$", re.I | re.M)
_VOTE = re.compile(r"^(?:vote\s*[:\-–—]\s*)?(approved?|rejected?)\b", re.I)
_PICK = re.compile(r"^(?:(?:pick|next)\s*[:\-–—]\s*)?(wind|wall|door)\W*$", re.I)


def _plain(line: str) -> str:
    return re.sub(r"[*_`#>]", "", line).strip()


def breaches(role: str, text: str) -> list[str]:
    """What a role's turn lacks of its contract (debate-hall's rules): Wind offers options and
    asks; Wall opens with a verdict and carries evidence; Door reasons in numbered steps."""
    out = []
    if role == "wind":
        if len(_ITEM.findall(text)) < 2:
            out.append("fewer than two options as list items")
        if "?" not in text:
            out.append("no question")
    elif role == "wall":
        if "verdict:" not in _plain(text.strip()[:200]).lower() and \
                "[verdict]" not in text.strip()[:200].lower():
            out.append("no VERDICT: within its first 200 characters")
        if not _EVIDENCE.search(text):
            out.append("no EVIDENCE section")
    elif len(_STEP.findall(text)) < 2:
        out.append("no synthesis in numbered steps (1., 2., …)")
    return out


def parse_vote(text: str) -> str:
    """APPROVE only when the first non-blank line starts with APPROVE (or ``Vote: APPROVE``)
    and names no REJECT; no keyword there, or both, is REJECT."""
    first = next((_plain(line) for line in text.splitlines() if _plain(line)), "")
    m = _VOTE.match(first)
    if m is None or not m.group(1).lower().startswith("approve"):
        return REJECT
    return REJECT if re.search(r"\breject", first, re.I) else APPROVE


def parse_pick(text: str) -> str | None:
    """The role the mediator's first non-blank line names alone (``WALL``, ``Next: wall``);
    None for anything else: a pick is never guessed."""
    first = next((_plain(line) for line in text.splitlines() if _plain(line)), "")
    m = _PICK.match(first)
    return m.group(1).lower() if m else None


def calls_vote(text: str) -> bool:
    return bool(CALL.search(text))
