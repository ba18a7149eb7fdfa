"""What the CLI adapters share, written once: argv pieces, the usual Invocation, failure
classification and JSON digging. Each ``adapters/<cli>.py`` keeps only what is its own.

Token counts are normalised here by convention (see docs/adapters.md): ``input`` is every input
token the model processed, cached or not; ``cached`` is the part of it served from a cache;
``output`` and ``reasoning`` are as the CLI reports them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from disputatio.adapters.base import (
    API_ERROR,
    AUTH,
    EMPTY,
    RATE_LIMIT,
    UNPARSEABLE,
    Capture,
    Invocation,
    TurnRequest,
    TurnResult,
    one_line,
    process_failure,
    signal_failure,
)

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# Words the CLIs use when credentials are missing or refused (401/403 are matched separately).
_AUTH_WORDS = re.compile(
    r"unauthori[sz]ed|not logged in|authenticat|api key|access token|forbidden|/login"
    r"|(invalid|missing|no|default) credentials|permission_denied|ineligibletier",
    re.IGNORECASE,
)
_RATE_WORDS = re.compile(
    r"rate.?limit|too many requests|quota|resource.?exhausted", re.IGNORECASE
)
_STATUS = re.compile(r"\b(401|403|429)\b")


def flag(name: str, value: object | None) -> list[str]:
    """``[name, value]``, or nothing when the value was not given."""
    return [] if value is None or value == "" else [name, str(value)]


def invocation(
    request: TurnRequest,
    argv: Iterable[str],
    *,
    prompt_on_stdin: bool = True,
    env: dict[str, str] | None = None,
    files: dict[str, bytes] | None = None,
) -> Invocation:
    """The usual shape: prompt bytes on stdin, the adapter's env defaults under the user's."""
    return Invocation(
        argv=tuple(argv),
        env={**(env or {}), **request.env},
        stdin=request.prompt.encode("utf-8") if prompt_on_stdin else None,
        files=dict(files or {}),
    )


def preflight(capture: Capture) -> TurnResult | None:
    """Spawn errors, timeouts, interruptions and outside kills come before any output."""
    return process_failure(capture) or signal_failure(capture)


def classify(message: str, status: int | None = None) -> str:
    """auth, rate_limit or api_error, from an HTTP status when known, else from the words."""
    if status in (401, 403):
        return AUTH
    if status == 429:
        return RATE_LIMIT
    if status is None:
        m = _STATUS.search(message)
        if m:
            return AUTH if m.group(1) in ("401", "403") else RATE_LIMIT
    if _AUTH_WORDS.search(message):
        return AUTH
    if _RATE_WORDS.search(message):
        return RATE_LIMIT
    return API_ERROR


def failure(message: str, status: int | None = None, **extra: Any) -> TurnResult:
    return TurnResult.failed(classify(message, status), message, **extra)


def answer(text: object, name: str, **extra: Any) -> TurnResult:
    """A success, unless the answer is blank: then ``empty`` (keeping cost and tokens)."""
    text = str(text or "").strip()
    if not text:
        return TurnResult.failed(EMPTY, f"{name} finished but its answer is empty", **extra)
    return TurnResult(ok=True, text=text, **extra)


def unparseable(name: str, expected: str, got: str = "") -> TurnResult:
    seen = one_line(clean(got), 80) if got.strip() else "nothing"
    return TurnResult.failed(UNPARSEABLE, f"{name} output not understood: expected {expected}; "
                             f"got {seen}")


def exit_failure(capture: Capture, name: str, expected: str) -> TurnResult:
    """No structured answer or error: a non-zero exit says the CLI failed (its own last words
    are the message); a zero exit with nothing we understand is ``unparseable``."""
    err, out = capture.read_stderr(), capture.read_stdout()
    if capture.exit_code:
        said = error_line(err) or error_line(out) or f"{name} exited with {capture.exit_code}"
        return failure(said)
    return unparseable(name, expected, out or err)


def clean(text: str) -> str:
    return _ANSI.sub("", text)


def error_line(text: str) -> str:
    """The line that says what went wrong: the first ``Error…`` line, else the first line
    naming a credential or rate problem, else the last line (help text tends to follow)."""
    lines = [ln.strip() for ln in clean(text).splitlines() if ln.strip()]
    for ln in lines:
        if ln.lower().startswith("error"):
            return ln
    for ln in lines:
        if classify(ln) != API_ERROR:
            return ln
    return lines[-1] if lines else ""


def last_json_object(text: str) -> dict | None:
    """The last JSON object that starts at the beginning of a line, one-line or pretty-printed
    (whose nested objects are indented); log lines and dumps before it are ignored."""
    decoder = json.JSONDecoder()
    for m in reversed(list(re.finditer(r"(?m)^\{", text))):
        try:
            obj, _ = decoder.raw_decode(text, m.start())
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def dig(obj: Any, path: str) -> Any:
    """``a.b.0.c`` through dicts and lists; raises LookupError naming the missing step."""
    for step in path.split("."):
        if isinstance(obj, list) and step.lstrip("-").isdigit():
            try:
                obj = obj[int(step)]
            except IndexError:
                raise LookupError(f"no item {step} in a list of {len(obj)}") from None
        elif isinstance(obj, dict) and step in obj:
            obj = obj[step]
        else:
            raise LookupError(f"no '{step}' in {type(obj).__name__}")
    return obj


def count(value: Any) -> int | None:
    """An int from a CLI's number, or None when it is missing or not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def reported(**counts: int | None) -> dict[str, int]:
    """Only the counts the CLI reported (a missing one stays absent, never 0)."""
    return {k: v for k, v in counts.items() if v is not None}
