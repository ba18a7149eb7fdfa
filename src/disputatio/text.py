"""Text from outside — agents' answers, a quaestio file, the human's answers — made safe to put
into our prompts, our artifacts and the terminal. Pure.

Two rules, neither of which depends on parsing markdown correctly:

- ``sanitize``: no terminal control sequences (OSC titles, CSI colours, C1 controls), no NUL or
  other control characters, one kind of line break. What reaches a terminal or a file is text.
- ``quote``: every line of a foreign text is prefixed with ``> ``, so no line of it can start a
  heading, a fence or anything else of ours; our own structure is only ever at column 0.

And one budget rule: ``fair_caps`` shares a character budget between texts so that short texts
are never cut and long ones are cut evenly; ``cut`` marks every cut where it happens.
"""

from __future__ import annotations

import re

# OSC (ESC ] ... BEL or ST), DCS/PM/APC/SOS (ESC P/^/_/X ... ST), CSI (ESC [ ... final byte),
# any other two-byte escape, then the C1 forms of the same introducers
_ESCAPES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?"
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[ -~]?"
    r"|\x9d[^\x07\x9c]*[\x07\x9c]?"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
)
# C0 controls but tab and newline, DEL, C1 controls
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BREAKS = re.compile(r"\r\n|\r|\u2028|\u2029|\x85")


def sanitize(text: str) -> str:
    """The text without control sequences or control characters, lines broken by ``\\n``."""
    text = _BREAKS.sub("\n", text)
    text = _ESCAPES.sub("", text)
    return _CONTROLS.sub("", text)


def quote(text: str) -> str:
    """Every line prefixed with ``> `` (blank ones with ``>``): a block no line of which can be
    read as ours, in a prompt or in markdown."""
    return "\n".join(f"> {line}" if line.strip() else ">"
                     for line in sanitize(text).split("\n"))


def one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(sanitize(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def fmt_size(n: int) -> str:
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def cut(text: str, limit: int, where: str) -> str:
    """``text`` within ``limit`` characters; a cut one ends with ``[cut: N more <where>]``."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - 80)   # room for the marker itself
    rest = len(text[keep:].encode())
    return f"{text[:keep].rstrip()}\n\n[cut: {fmt_size(rest)} more {where}]"


def fair_caps(lengths: list[int], budget: int) -> list[int]:
    """A cap per text such that the capped lengths sum to at most ``budget``: texts shorter than
    an even share keep all they have, and what they leave is shared by the longer ones."""
    caps = list(lengths)
    if sum(lengths) <= budget:
        return caps
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    left, count = budget, len(lengths)
    for pos, i in enumerate(order):
        share = left // (count - pos)
        if lengths[i] <= share:
            left -= lengths[i]
            continue
        for j in order[pos:]:
            caps[j] = share
        break
    return caps
