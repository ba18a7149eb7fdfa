"""What the ledger and the artifacts may show of a lineup: secrets never reach disk.

Environment values are never recorded (only their names), and an argument that looks like a
credential (``--api-key X``, ``--token=X``, ``Authorization: Bearer X``) loses its value.
"""

from __future__ import annotations

import re

REDACTED = "<redacted>"
_SECRET_WORD = r"(?:key|token|secret|passw(?:or)?d|auth|credential|bearer|cookie)"
_FLAG = re.compile(rf"^--?[\w.-]*{_SECRET_WORD}[\w.-]*$", re.IGNORECASE)
_FLAG_EQ = re.compile(rf"^(--?[\w.-]*{_SECRET_WORD}[\w.-]*=).+$", re.IGNORECASE)
_ASSIGN = re.compile(rf"(\b[\w.-]*{_SECRET_WORD}[\w.-]*\s*[=:]\s*)"
                     r"((?:Bearer|Basic)\s+\S+|\"[^\"]*\"|'[^']*'|[^\s,}]+)", re.IGNORECASE)


def args(argv) -> list[str]:
    """argv with the values of credential-looking flags and assignments replaced."""
    out: list[str] = []
    hide_next = False
    for a in argv:
        a = str(a)
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        if _FLAG.match(a):
            out.append(a)
            hide_next = True
            continue
        m = _FLAG_EQ.match(a)
        if m:
            out.append(m.group(1) + REDACTED)
            continue
        out.append(_ASSIGN.sub(lambda m: m.group(1) + REDACTED, a))
    return out


def participant(data: dict) -> dict:
    """A participant's dump (``model_dump``) as it may be recorded: env names only."""
    shown = dict(data)
    if shown.get("env"):
        shown["env"] = {k: REDACTED for k in shown["env"]}
    for key in ("extra_args", "argv"):
        if shown.get(key):
            shown[key] = args(shown[key])
    return shown
