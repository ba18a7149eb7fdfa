"""The adapter contract: how one agent CLI is invoked and how its output is read.

Adapters know nothing of debates. ``build`` turns a request into an ``Invocation`` and ``parse``
turns a finished process (``Capture``) into a ``TurnResult``; both are pure, so captured real
output can test them without starting a process. The process itself belongs to ``transport``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from disputatio.adapters.fence import StateDir
from disputatio.text import one_line as text_one_line

# How much of an agent's stdout a parser reads; the whole of it stays in raw/.
READ_LIMIT = 8 * 1024 * 1024

# Failure kinds, named once. A TurnResult with ok=False carries exactly one of them.
NOT_INSTALLED = "not_installed"
NOT_RUNNABLE = "not_runnable"
AUTH = "auth"
TIMEOUT = "timeout"
BUDGET = "budget"
RATE_LIMIT = "rate_limit"
API_ERROR = "api_error"
EMPTY = "empty"
UNPARSEABLE = "unparseable"
KILLED = "killed"
INTERRUPTED = "interrupted"
FAILURE_KINDS = (
    NOT_INSTALLED, NOT_RUNNABLE, AUTH, TIMEOUT, BUDGET, RATE_LIMIT,
    API_ERROR, EMPTY, UNPARSEABLE, KILLED, INTERRUPTED,
)


@dataclass(frozen=True)
class TurnRequest:
    """What one turn asks of a CLI, in CLI-neutral terms."""

    prompt: str
    bin: str
    model: str | None = None
    effort: str | None = None
    max_budget_usd: float | None = None
    timeout_s: float | None = None
    extra_args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    # adapter-specific settings from the participant's config (e.g. the ``command`` adapter's
    # ``argv`` template, ``output`` format and ``answer_path``)
    options: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class GiveUp:
    """Output that shows a CLI can only be retrying, so waiting longer is a waste.

    Some CLIs never give up by themselves (codex without a network loops on "Reconnecting...
    waiting for network"). The transport ends the turn once every line the CLI has written to
    ``stream`` for ``patience_s`` matched ``pattern`` (a regex over one line, as bytes); a line
    that does not match means the CLI is making progress again and restarts the clock.
    """

    pattern: bytes
    reason: str          # the failure message: what the matched lines mean
    kind: str            # the failure kind the turn gets
    patience_s: float = 0.0
    stream: str = "stdout"


@dataclass(frozen=True)
class Invocation:
    """A process to start: argv, environment additions and the bytes for stdin.

    ``stdin`` None means /dev/null. ``files`` are written (relative to the turn's scratch dir)
    before the process starts; ``{scratch}`` in argv or env values is replaced by that dir.
    """

    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    stdin: bytes | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    # what ``build`` wants ``parse`` to know (e.g. the command adapter's output format); the
    # transport hands it over unchanged as ``Capture.context``
    context: dict[str, object] = field(default_factory=dict)
    give_up: GiveUp | None = None


@dataclass(frozen=True)
class Capture:
    """A finished process, as the transport recorded it. Output lives in files, never in memory."""

    stdout_path: Path
    stderr_path: Path
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    timeout_s: float | None = None   # the limit it ran under; duration_s adds the kill grace
    interrupted: bool = False
    duration_s: float = 0.0
    spawn_error: str | None = None  # the OS error when the binary could not be started
    context: dict[str, object] = field(default_factory=dict)  # from Invocation.context
    gave_up: GiveUp | None = None  # the rule that ended the process early, if one did
    # files the CLI wrote outside stdout/stderr, copied beside them after it ended (``collect``)
    collected: dict[str, Path] = field(default_factory=dict)

    def read_stdout(self, limit: int = READ_LIMIT) -> str:
        return _read_text(self.stdout_path, limit)

    def read_stderr(self, limit: int = 1024 * 1024) -> str:
        return _read_text(self.stderr_path, limit)

    def stdout_json_lines(self) -> Iterator[dict]:
        """Each stdout line that is a JSON object; other lines (banners, logs) are skipped."""
        yield from _json_lines(self.stdout_path)

    def stderr_json_lines(self) -> Iterator[dict]:
        yield from _json_lines(self.stderr_path)

    def collected_json_lines(self, name: str) -> Iterator[dict]:
        """The JSON-object lines of a collected file; nothing when it was not collected."""
        if name in self.collected:
            yield from _json_lines(self.collected[name])

    def beside(self, suffix: str) -> Path:
        """A path next to the raw stdout for another file of this turn (``<stem><suffix>``)."""
        return self.stdout_path.with_name(self.stdout_path.name.removesuffix(".stdout") + suffix)


@dataclass
class TurnResult:
    """What a turn produced: an answer, or one failure kind with a one-line message."""

    ok: bool
    text: str = ""
    failure: str | None = None
    message: str = ""
    cost_usd: float | None = None
    # input, output, cached, reasoning; a key is absent when the CLI did not report it
    tokens: dict[str, int] = field(default_factory=dict)
    # commands (shell commands run), tool_calls (all tool calls); absent when not observable
    evidence: dict[str, int] = field(default_factory=dict)
    session_id: str | None = None

    @classmethod
    def failed(cls, kind: str, message: str, **extra) -> TurnResult:
        assert kind in FAILURE_KINDS, kind
        return cls(ok=False, failure=kind, message=one_line(message), **extra)


class Adapter(Protocol):
    """One agent CLI. Implementations are module-level singletons in ``adapters/<name>.py``,
    listed in the registry (``adapters/__init__.py``); ``kit.BasicAdapter`` gives defaults.

    Optionally ``collect(capture, env) -> dict[str, Path]``: after the process ended, copy what
    the CLI wrote outside stdout/stderr (``env`` is the environment it ran with, so the hook can
    find the CLI's home) beside the raw output (``capture.beside``) and name the copies; they
    reach ``parse`` as ``Capture.collected``. Run through ``collect`` below.
    """

    name: str          # config key, e.g. "claude"
    vendor: str        # e.g. "Anthropic"; used to warn when debaters share a vendor
    kind: str          # AGENT, CUSTOM (any CLI from config) or SIMULATED: adapters.KINDS
    default_bin: str   # executable looked up on PATH when the config gives no ``bin``
    package: str | None  # the npm package of the pinned CLI the real test tier installs
    tested_version: str | None  # the version the parser was proven against
    version_args: tuple[str, ...]  # e.g. ("--version",); empty: nothing to probe
    # where the CLI must write to stay logged in and work; the write fence (fence.py) leaves
    # these writable and nothing else outside the checkout and a private temp dir
    state_dirs: tuple[StateDir, ...]

    def build(self, request: TurnRequest) -> Invocation: ...

    def parse(self, capture: Capture) -> TurnResult: ...

    def read_version(self, output: str) -> str | None: ...


def collect(adapter, capture: Capture, env: Mapping[str, str]) -> Capture:
    """``capture`` plus what the adapter's optional ``collect`` hook gathered. Why a hook: some
    CLIs report part of a turn only in their own files (copilot's per-request usage lives in
    its session folder); copied into raw/, it keeps ``parse`` a function of the raw files. A
    file that cannot be read gathers nothing: the turn never fails for it."""
    hook = getattr(adapter, "collect", None)
    if hook is None or capture.spawn_error is not None:
        return capture
    try:
        found = hook(capture, env)
    except (OSError, ValueError):
        return capture
    return dataclasses.replace(capture, collected={**capture.collected, **found})


def one_line(text: str, limit: int = 300) -> str:
    """Collapse whitespace so a message fits one line of a report, with no control sequence a
    terminal would obey (a CLI's error text is foreign text)."""
    return text_one_line(str(text), limit)


def process_failure(capture: Capture) -> TurnResult | None:
    """The failures every adapter classifies the same way, before looking at the output."""
    if capture.spawn_error is not None:
        kind = NOT_INSTALLED if "No such file" in capture.spawn_error else NOT_RUNNABLE
        return TurnResult.failed(kind, capture.spawn_error)
    if capture.interrupted:
        return TurnResult.failed(INTERRUPTED, "the run was interrupted (SIGINT or SIGTERM)")
    if capture.timed_out:
        limit = capture.timeout_s if capture.timeout_s is not None else capture.duration_s
        return TurnResult.failed(TIMEOUT, f"no answer within {_seconds(limit)} s")
    if capture.gave_up is not None:
        return TurnResult.failed(capture.gave_up.kind, f"{capture.gave_up.reason} (ended after "
                                 f"{capture.duration_s:.0f} s)")
    return None


def _seconds(s: float) -> str:
    """20 → "20", 0.6 → "0.6": the limit as the user set it, not a rounded-up duration."""
    return f"{s:.0f}" if s >= 10 else f"{s:.1f}".removesuffix(".0")


def signal_failure(capture: Capture) -> TurnResult | None:
    """A process ended by a signal we did not send: killed from outside (OOM, a user)."""
    if capture.signal is not None:
        return TurnResult.failed(KILLED, f"the CLI was killed by signal {capture.signal}")
    return None


def _read_text(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _json_lines(path: Path) -> Iterator[dict]:
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return
    with fh:
        for raw in fh:
            raw = raw.strip()
            if not raw.startswith(b"{"):
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict):
                yield obj
