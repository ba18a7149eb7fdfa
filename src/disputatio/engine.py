"""Runs a protocol Step: each turn in its own thread, in its participant's workspace, through
its adapter and the shared transport; every finished turn is appended to the ledger at once.
What it appends goes through the run context, which tells its subscribers (the progress view);
the context's cancel token ends the turns' processes."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from disputatio import adapters, events, prompts, redact
from disputatio.adapters import transport
from disputatio.adapters.base import (
    INTERRUPTED,
    NOT_RUNNABLE,
    READ_LIMIT,
    Capture,
    TurnRequest,
    TurnResult,
    collect,
)
from disputatio.cancel import CancelToken
from disputatio.config import Participant, user_config_path
from disputatio.gitenv import WorkspaceError, agent_env
from disputatio.ledger import Event, Ledger
from disputatio.protocols.base import Step, TurnSpec
from disputatio.text import fmt_size, one_line, sanitize

VERSION_WAIT_S = 3.0
# what the ledger, the artifacts and other agents' prompts may hold of one answer, in characters;
# the whole output is always in raw/
ANSWER_LIMIT = 100_000


@dataclass
class Seat:
    """A role in the debate and the spend cap it runs under."""

    participant: Participant
    budget_usd: float | None = None


class Recorder(Protocol):
    """Where the engine's events go: appended to the ledger, then told to whoever follows."""

    cancel: CancelToken

    def record(self, ledger: Ledger, event: events.EventData) -> Event: ...


class Engine:
    def __init__(self, ledger: Ledger, debate_dir: Path, seats: dict[str, Seat],
                 workspaces, timeout_s: float, context: Recorder,
                 max_parallel: int | None = None, hidden: list[Path] | None = None):
        self.ledger = ledger
        # absolute: the fence binds the folder and hides its lineup.json by this path, and
        # agents run elsewhere (a relative --debate resolved inside the fence fails)
        self.raw_dir = debate_dir.absolute() / "raw"
        self.seats = seats
        self.workspaces = workspaces
        self.timeout_s = timeout_s   # for seats without their own timeout_minutes
        self.context = context
        self.max_parallel = max_parallel
        self.hidden = list(hidden or [])   # besides lineup.json and the user's config
        self._versions = _VersionCache(self.raw_dir / "versions", timeout_s=15,
                                       cancel=context.cancel)

    def run(self, step: Step, budgets: dict[str, float] | None = None) -> None:
        """Run the step's turns in parallel, at most ``max_parallel`` at once (rate limits,
        small machines: the rest wait for a free slot); returns when all have finished.
        ``budgets``: a spend cap per turn id (the cost cap's share), on top of the seat's."""
        workers = max(1, min(len(step.turns), self.max_parallel or len(step.turns)))
        caps = budgets or {}
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for fut in [pool.submit(self._turn, t, caps.get(t.turn_id)) for t in step.turns]:
                fut.result()

    def _turn(self, spec: TurnSpec, cap: float | None = None) -> None:
        seat = self.seats[spec.participant]
        p = seat.participant
        adapter = adapters.get(p.adapter)
        binary = participant_bin(p)
        version = self._versions.start(binary, adapter, dict(p.env))
        prompt = prompts.render(spec.template, spec.variables)
        budget = p.max_budget_usd if seat.budget_usd is None else seat.budget_usd
        if cap is not None:
            budget = cap if budget is None else min(budget, cap)
        timeout_s = p.timeout_minutes * 60 if p.timeout_minutes else self.timeout_s
        request = TurnRequest(prompt=prompt, bin=binary, model=p.model, effort=p.effort,
                              max_budget_usd=budget, timeout_s=timeout_s,
                              extra_args=tuple(p.extra_args), env=dict(p.env),
                              options=p.options())
        invocation = adapter.build(request)
        prompt_bytes = prompt.encode()
        # the ledger's keys: "role" holds the participant, "seat" the role
        base = {"turn_id": spec.turn_id, "role": spec.participant, "seat": spec.role,
                "phase": spec.phase, "round": spec.round, "adapter": p.adapter,
                "model": p.model}
        begun = events.TurnStarted(**base, prompt_bytes=len(prompt_bytes),
                                   prompt_sha256=hashlib.sha256(prompt_bytes).hexdigest(),
                                   argv=_redact(invocation.argv, prompt))
        started = self.context.record(self.ledger, begun)
        # raw files are named after the turn_started event: unique per attempt whatever the
        # participants are called (names that differ only in characters a file name cannot
        # hold, case variants on a case-insensitive disk, a retried turn)
        stem = raw_stem(started.seq, spec.turn_id)
        self.raw_dir.mkdir(parents=True, exist_ok=True)
        (self.raw_dir / f"{stem}.prompt.md").write_text(prompt, encoding="utf-8")
        base["raw_stem"] = stem
        waited = time.monotonic()
        try:
            cwd = self.workspaces.path_for(spec.participant)
        except WorkspaceError as exc:  # the checkout could not be made or restored
            self._finish(spec, base, TurnResult.failed(NOT_RUNNABLE, f"workspace: {exc}"),
                         None, version, time.monotonic() - waited)
            return
        waited = time.monotonic() - waited
        # nothing in the agent's environment may lead back to the user's repository
        env = agent_env(os.environ, cwd, getattr(self.workspaces.snapshot, "repo", None))
        capture = transport.run(invocation, cwd, timeout_s, self.raw_dir, stem, env,
                                writable=[cwd], state=adapter.state_dirs,
                                protect=self._protected(), hide=self._hidden(),
                                cancel=self.context.cancel)
        # what the CLI wrote outside stdout/stderr (copilot's usage), copied into raw/
        capture = collect(adapter, capture, {**env, **invocation.env})
        self._finish(spec, base, adapter.parse(capture), capture, version, waited)

    def _protected(self) -> list[Path]:
        """What no agent may write even if its CLI's state dir held it: the user's repository,
        the debate folder and every checkout (an agent's own is granted on top)."""
        repo = getattr(self.workspaces.snapshot, "repo", None)
        root = getattr(self.workspaces, "root", None)
        return [p for p in (repo, self.raw_dir.parent, root) if p is not None]

    def _hidden(self) -> list[Path]:
        """Files an agent reads as empty: they hold every participant's env values (logins,
        keys), and each agent is given only its own: the debate's lineup.json, the user's
        config file and the ``--config`` file the debate was started from."""
        return [self.raw_dir.parent / "lineup.json", user_config_path(), *self.hidden]

    def _finish(self, spec: TurnSpec, base: dict, result: TurnResult, capture: Capture | None,
                version: _Version, waited: float) -> None:
        """Record the turn (an interrupted one as such: it re-runs on resume) and show it."""
        duration = capture.duration_s if capture else 0.0
        text, cut_bytes = answer_text(result.text, capture)
        kind = events.TurnInterrupted if result.failure == INTERRUPTED else events.TurnCompleted
        ended = kind(
            **base, ok=result.ok, text=text, failure=result.failure,
            message=one_line(result.message) if result.message else result.message,
            cost_usd=result.cost_usd, tokens=result.tokens,
            evidence=result.evidence, session_id=result.session_id,
            exit_code=capture.exit_code if capture else None,
            signal=capture.signal if capture else None,
            duration_s=round(duration, 3), workspace_s=round(waited, 3),
            cli_version=version.get(wait_s=VERSION_WAIT_S),
            raw=[capture.stdout_path.name, capture.stderr_path.name,
                 *(p.name for p in capture.collected.values())] if capture else [],
            text_cut_bytes=cut_bytes or None,
        )
        self.context.record(self.ledger, ended)


def answer_text(text: str, capture: Capture | None) -> tuple[str, int]:
    """An answer as the ledger keeps it: sanitized (no control sequences) and within
    ``ANSWER_LIMIT`` characters, a cut marked where it happens; the whole output stays in
    ``raw/``. Returns the text and how many bytes were left out (0: none)."""
    text = sanitize(text or "")
    if not text:
        return text, 0
    unread = 0
    if capture is not None:   # the adapter read only the first READ_LIMIT bytes of stdout
        try:
            unread = max(0, capture.stdout_path.stat().st_size - READ_LIMIT)
        except OSError:
            pass
    if len(text) <= ANSWER_LIMIT and not unread:
        return text, 0
    keep = text[:ANSWER_LIMIT - 100].rstrip() if len(text) > ANSWER_LIMIT else text
    left = len(text.encode()) - len(keep.encode()) + unread
    where = f"raw/{capture.stdout_path.name}" if capture is not None else "the raw output"
    return f"{keep}\n\n[cut: {fmt_size(left)} more in {where}]", left


def participant_bin(p: Participant) -> str:
    """The executable a participant runs — its ``bin``, else its CLI's usual name, else (for the
    ``command`` adapter) its ``argv[0]`` — as an absolute path when it can be found, because
    the agent runs in its workspace, not here."""
    adapter = adapters.get(p.adapter)
    return resolve_bin(p.bin or adapter.default_bin or (p.argv[0] if p.argv else ""))


def resolve_bin(name: str) -> str:
    """An absolute path when the binary is on PATH (or a relative path from here); the name
    itself otherwise (the transport then reports ``not_installed`` in the OS's words)."""
    if "/" in name:
        return str(Path(name).expanduser().absolute())
    return shutil.which(name) or name


def raw_stem(seq: int, turn_id: str) -> str:
    """``<seq>-<readable id>``: the seq makes it unique, the rest makes ``raw/`` browsable."""
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "-", turn_id).strip("-.")[:60].lower()
    return f"{seq:05d}-{readable or 'turn'}"


def _stem(turn_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "--", turn_id)


def _redact(argv: tuple[str, ...], prompt: str) -> list[str]:
    """argv as recorded in the ledger: no prompt text, no credential values."""
    return redact.args("<prompt>" if prompt and a == prompt else a for a in argv)


class _Version:
    def __init__(self):
        self._done = threading.Event()
        self._value: str | None = None

    def set(self, value: str | None) -> None:
        self._value = value
        self._done.set()

    def get(self, wait_s: float = 0.0) -> str | None:
        """The version once the probe has finished. The probe runs alongside the turn, so by a
        turn's end it has almost always finished; a short wait covers a turn faster than it."""
        self._done.wait(wait_s)
        return self._value if self._done.is_set() else None


class _VersionCache:
    """``<bin> --version`` once per binary per debate, in the background."""

    def __init__(self, raw_dir: Path, timeout_s: float, cancel: CancelToken | None = None):
        self.raw_dir = raw_dir
        self.timeout_s = timeout_s
        self.cancel = cancel
        self._lock = threading.Lock()
        self._cache: dict[str, _Version] = {}

    def start(self, binary: str, adapter, env: dict[str, str]) -> _Version:
        with self._lock:
            if binary in self._cache:
                return self._cache[binary]
            v = self._cache[binary] = _Version()
        if not adapter.version_args:
            v.set(adapter.tested_version)
            return v
        threading.Thread(target=self._probe, args=(binary, adapter, env, v), daemon=True).start()
        return v

    def _probe(self, binary: str, adapter, env: dict[str, str], v: _Version) -> None:
        v.set(probe_version(binary, adapter, self.raw_dir, self.timeout_s, env, self.cancel))


def probe_version(binary: str, adapter, raw_dir: Path, timeout_s: float,
                  env: dict[str, str] | None = None,
                  cancel: CancelToken | None = None) -> str | None:
    """The version ``<bin> <version_args>`` prints, as the adapter reads it, or None. Runs with the
    participant's ``env`` so a CLI with its own home or cache does not write to the default,
    and in a private empty directory: ``raw_dir`` (where the output is kept) may be inside the
    user's repository, and no CLI ever runs there."""
    from disputatio.adapters.base import Invocation

    stem = _stem(f"{adapter.name}-{Path(binary).name}-version")
    with tempfile.TemporaryDirectory(prefix="disputatio-probe-",
                                     ignore_cleanup_errors=True) as tmp:
        cwd = Path(tmp)
        cap = transport.run(Invocation(argv=(binary, *adapter.version_args),
                                       env=dict(env or {})),
                            cwd, timeout_s, raw_dir, stem, agent_env(os.environ, cwd),
                            writable=[], state=adapter.state_dirs, cancel=cancel)
    if cap.spawn_error or cap.timed_out or cap.exit_code:
        return None
    return adapter.read_version(cap.read_stdout(4096) + cap.read_stderr(4096))


