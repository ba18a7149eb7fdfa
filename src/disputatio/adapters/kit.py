"""The adapter kit: what agent CLIs share, written once and public, so an adapter module keeps
only what is truly its own CLI's.

``BasicAdapter`` carries a default for every part of the contract (``base.Adapter``): the usual
invocation built from declared flags, a plain-text ``parse``, no ``collect``, a ``--version``
probe. A CLI that fits is a handful of assignments; one that does not overrides a method and
still uses the helpers below (argv pieces, failure classification, JSON digging).

Token counts are normalised here by convention (see docs/adapters.md): ``input`` is every input
token the model processed, cached or not; ``cached`` is the part of it served from a cache;
``output`` and ``reasoning`` are as the CLI reports them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from disputatio.adapters import AGENT, CUSTOM, KINDS, SIMULATED  # noqa: F401 (the kit's too)
from disputatio.adapters.base import (
    API_ERROR,
    AUTH,
    EMPTY,
    RATE_LIMIT,
    UNPARSEABLE,
    Capture,
    GiveUp,
    Invocation,
    TurnRequest,
    TurnResult,
    one_line,
    process_failure,
    signal_failure,
)
from disputatio.adapters.fence import StateDir
from disputatio.text import sanitize

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
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-+][\w.]*\w)?")


COLLECT_LIMIT = 64 * 1024 * 1024


def copy_agent_file(source: Path, target: Path, limit: int = COLLECT_LIMIT) -> None:
    """Copy a file an agent could have written (its CLI's state dir is writable to it) into
    ``raw/``, on the assumption it is hostile: a symlink is not followed (to ``/dev/zero`` it
    would fill the disk), anything but a regular file is refused, and at most ``limit`` bytes
    are copied. Raises OSError when the file is not fit to read."""
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{source}: not a regular file")
        with open(target, "wb") as out:
            left = limit
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                out.write(chunk)
                left -= len(chunk)
    finally:
        os.close(fd)


def flag(name: str | None, value: object | None) -> list[str]:
    """``[name, value]``, or nothing when the value was not given (or the CLI has no such
    flag: ``name`` None)."""
    return [] if name is None or value is None or value == "" else [name, str(value)]


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
    """A success, unless the answer is blank: then ``empty`` (keeping cost and tokens). Blank
    as the ledger will keep it, with control sequences stripped."""
    text = str(text or "").strip()
    if not sanitize(text).strip():
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


def result_line(capture: Capture, kind: str = "result") -> dict | None:
    """The last stdout JSON line whose ``type`` is ``kind``: the one-object summary many CLIs
    print at the end of a JSON-lines stream."""
    found = None
    for obj in capture.stdout_json_lines():
        if obj.get("type") == kind:
            found = obj
    return found


def version_of(output: str) -> str | None:
    """The first version-looking token of a ``--version`` output (``2.1.197``, ``0.1.0-rc.2``)."""
    m = _VERSION.search(output)
    return m.group(0) if m else None


class BasicAdapter:
    """Defaults for every part of the adapter contract; subclass, declare, override what differs.

    Declared facts (the registry and everything derived from it read these): ``name`` (the
    config's ``adapter:``), ``vendor``, ``kind``, ``default_bin`` (default: the name),
    ``package`` (what installs the pinned CLI for the real test tier), ``tested_version``,
    ``version_args``, ``state_dirs`` (what the write fence must leave writable).

    The default ``build``: ``<bin> <args> [model_flag model] [effort_flag effort]
    [budget_flag budget] <extra_args>``, prompt on stdin, ``env`` under the user's and ``files``
    placed in the scratch dir, ``give_up`` attached. A flag declared None is never passed (its
    setting is ignored). The default ``parse``: stdout is the answer, as plain text.
    """

    name: str
    vendor: str
    kind: str = AGENT
    default_bin: str
    package: str | None = None
    tested_version: str | None = None
    version_args: tuple[str, ...] = ("--version",)
    state_dirs: tuple[StateDir, ...] = ()

    args: tuple[str, ...] = ()
    model_flag: str | None = "--model"
    effort_flag: str | None = None
    budget_flag: str | None = None
    env: Mapping[str, str] = MappingProxyType({})
    files: Mapping[str, bytes] = MappingProxyType({})
    give_up: GiveUp | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # most CLIs install a binary named like their adapter; the others declare their own
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__ and "default_bin" not in cls.__dict__:
            cls.default_bin = cls.name

    def build(self, request: TurnRequest) -> Invocation:
        argv = [
            request.bin, *self.args,
            *flag(self.model_flag, request.model),
            *flag(self.effort_flag, request.effort),
            *flag(self.budget_flag, request.max_budget_usd),
            *request.extra_args,
        ]
        built = invocation(request, argv, env=dict(self.env), files=dict(self.files))
        return dataclasses.replace(built, give_up=self.give_up) if self.give_up else built

    def parse(self, capture: Capture) -> TurnResult:
        failed = preflight(capture)
        if failed:
            return failed
        if capture.exit_code:
            said = error_line(capture.read_stderr()) or error_line(capture.read_stdout())
            return failure(said or f"{self.name} exited with {capture.exit_code}")
        return answer(clean(capture.read_stdout()), self.name)

    def collect(self, capture: Capture, env: Mapping[str, str]) -> dict[str, Path]:
        """Nothing outside stdout and stderr to gather."""
        return {}

    def read_version(self, output: str) -> str | None:
        """The version in what ``<bin> <version_args>`` printed."""
        return version_of(output)
