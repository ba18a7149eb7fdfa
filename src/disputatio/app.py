"""Use cases behind the CLI: run, continue, finalize, resume, verify. Each returns an Outcome;
the CLI only maps it to stdout and an exit code."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from disputatio import __version__, config, ledger, protocols, redact, render, signing
from disputatio import progress as progress_view
from disputatio.adapters import fence as fencing
from disputatio.adapters import transport
from disputatio.config import DebateConfig, Participant
from disputatio.engine import Engine, Seat
from disputatio.events import (
    AnswersGiven,
    DebateEnded,
    DebateStarted,
    EventData,
    EventError,
    FinalizeRequested,
    Interrupted,
    Resumed,
    typed,
)
from disputatio.outcome import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    BrokenLedger,
    Busy,  # noqa: F401  (what the writer lock raises from every use case that appends)
    Outcome,
    UsageError,
)
from disputatio.progress import warn
from disputatio.protocols.base import DebateState, Done
from disputatio.render import summary

LINEUP_FILE = "lineup.json"
DEBATES = ".debate"


@dataclass
class RunOptions:
    rounds: int | None = None
    repo: str | None = None
    timeout_minutes: float | None = None
    budget_usd: float | None = None
    include_uncommitted: bool | None = None
    max_parallel: int | None = None
    quiet: bool = False
    sign: bool = False
    fence: str | None = None


def run(quaestio: str, cfg: DebateConfig, options: RunOptions, base: Path | None = None,
        protocol: str = "disputatio") -> Outcome:
    """Start a new debate in ``<base>/.debate/debate-<UTC ts>/`` and carry it as far as it goes."""
    if not quaestio.strip():
        raise UsageError("the quaestio is empty: give a question, or --file PATH")
    cfg = _apply(cfg, options)
    if cfg.include_uncommitted and not cfg.repo:
        raise UsageError("--include-uncommitted needs a repository (--repo PATH)")
    check_binaries(cfg)
    fence = choose_fence(cfg.fence)
    base = base or Path.cwd()
    snapshot = _snapshot(cfg.repo, cfg.include_uncommitted)
    for w in config.lineup_warnings(cfg):
        warn(w)
    key = _signing_key(cfg.sign or options.sign or None)
    debate_dir = _new_debate_dir(base)
    with ledger.WriterLock(debate_dir, "a new debate"):
        led = ledger.Ledger(debate_dir / "events.jsonl")
        synth = cfg.synthesizer or cfg.judge
        lineup = {p.display: p for p in cfg.participants}
        lineup_sha = _write_lineup(debate_dir, lineup, cfg.judge, synth, key)
        _append(led, DebateStarted(
            quaestio=quaestio, protocol=protocol, version=__version__,
            rounds=cfg.rounds, timeout_s=cfg.timeout_minutes * 60,
            max_parallel=cfg.max_parallel,
            budget_usd=options.budget_usd, repo=str(Path(cfg.repo).resolve())
            if cfg.repo else None, include_uncommitted=cfg.include_uncommitted,
            snapshot=getattr(snapshot, "commit", None),
            participants=list(lineup), judge=_judge_name(cfg.judge),
            synthesizer=_synth_name(cfg, synth),
            lineup={n: _public(p) for n, p in lineup.items()},
            seats={"judge": _public(cfg.judge) if cfg.judge else None,
                   "synthesizer": _public(synth) if synth else None},
            lineup_file=LINEUP_FILE, lineup_sha256=lineup_sha,
            **fence.record(),
        ))
        return _signed(_drive(debate_dir, led, options.quiet, snapshot), led, key)


def continue_(answers: str, debate: Path | None, quiet: bool = False,
              base: Path | None = None, timeout_minutes: float | None = None,
              sign: bool = False, fence: str | None = None) -> Outcome:
    """Give the judge the human's answers; re-rule and, if resolved, draft the report."""
    if not answers.strip():
        raise UsageError("--continue needs the answers to the judge's questions")
    with _open(debate, base, "--continue", sign) as (debate_dir, led, key):
        state = DebateState.from_events(led.events)
        _needs_judge(state, debate_dir, "there are no questions to answer")
        status = state.latest_status()
        if status is None:
            raise UsageError(f"{debate_dir}: the judge has not ruled yet; use --resume")
        if status == "RESOLVED":
            raise UsageError(f"{debate_dir}: the debate is already resolved; use --finalize to "
                             "re-draft the report")
        _seats(state.started, debate_dir, warn_edit=False)  # unusable: fail before appending
        fence = choose_fence(fence)
        _append(led, AnswersGiven(answers=answers, **fence.record()))
        return _signed(_drive(debate_dir, led, quiet, _snapshot_from_ledger(led),
                              repo_roles="synthesizer", timeout_minutes=timeout_minutes),
                       led, key)


def finalize(debate: Path | None, quiet: bool = False, base: Path | None = None,
             timeout_minutes: float | None = None, sign: bool = False,
             fence: str | None = None) -> Outcome:
    """Re-draft final-report.md from a resolved debate."""
    with _open(debate, base, "--finalize", sign) as (debate_dir, led, key):
        state = DebateState.from_events(led.events)
        _needs_judge(state, debate_dir, "there is no ruling to draft a report from")
        status = state.latest_status()
        if status != "RESOLVED":
            what = "has not ruled yet" if status is None else f"ruled {status}"
            raise UsageError(f"{debate_dir}: cannot finalize: the judge {what}; answer with "
                             "--continue \"...\" first" if status else
                             f"{debate_dir}: cannot finalize: the judge {what}; use --resume")
        _seats(state.started, debate_dir, warn_edit=False)  # unusable: fail before appending
        fence = choose_fence(fence)
        _append(led, FinalizeRequested(**fence.record()))
        return _signed(_drive(debate_dir, led, quiet, _snapshot_from_ledger(led),
                              repo_roles="synthesizer", timeout_minutes=timeout_minutes),
                       led, key)


def resume(debate: Path | None, quiet: bool = False, base: Path | None = None,
           timeout_minutes: float | None = None, sign: bool = False,
           fence: str | None = None) -> Outcome:
    """Finish a debate that crashed, was interrupted or stopped on a failure: turns with no
    completion re-run, and so do the failed turns the debate stopped on (too few proposals, no
    ruling, no report). A debate that is already done is left as it is."""
    with _open(debate, base, "--resume", sign) as (debate_dir, led, key):
        state = DebateState.from_events(led.events)
        protocol = protocols.get(state.started.protocol)
        step = protocol.next_step(state)
        retry: list[str] = []
        if isinstance(step, Done):
            stopped_on = {"aborted": ("proposal",), "failed": ("respondeo", "redactio")}
            phases = stopped_on.get(step.status)
            if phases is None:
                primary = _write(debate_dir, led.events, step.status, step.reason)
                return Outcome(EXIT_OK, primary, step.status, "nothing to resume: the debate "
                               f"is {step.status.replace('_', ' ')}")
            retry = [t.turn_id for t in state.turns.values() if not t.ok and t.phase in phases]
        _seats(state.started, debate_dir, warn_edit=False)  # unusable: fail before appending
        fence = choose_fence(fence)
        _append(led, Resumed(version=__version__, retry=retry, **fence.record()))
        return _signed(_drive(debate_dir, led, quiet, _snapshot_from_ledger(led),
                              timeout_minutes=timeout_minutes), led, key)


def verify(debate: Path | None, base: Path | None = None,
           allowed_signers: Path | None = None) -> Outcome:
    """Re-hash the chain; with ``allowed_signers``, also prove that a trusted key signed the
    head the ledger has now. Never takes the writer's lock: it only reads."""
    debate_dir = _find(debate, base)
    if allowed_signers is not None and not allowed_signers.is_file():
        raise UsageError(f"{allowed_signers}: no such allowed-signers file")
    path = debate_dir / "events.jsonl"
    try:
        ok, message = ledger.verify(path, _recorded(debate_dir))
        if ok and allowed_signers is None:
            message += signing.note(debate_dir)
        elif ok:
            ok, signed = signing.check(debate_dir, [e.hash for e in ledger.load(path)],
                                       allowed_signers)
            message = f"{message}; {signed}" if ok else signed
    except OSError as exc:
        raise UsageError(f"{debate_dir}: cannot read the ledger: {exc.strerror}") from None
    except (ledger.LedgerError, signing.SigningError) as exc:
        raise UsageError(str(exc)) from None
    return Outcome(EXIT_OK if ok else EXIT_FAILED, None, "verified" if ok else "broken", message)


# --- the loop ---------------------------------------------------------------------------

def _drive(debate_dir: Path, led: ledger.Ledger, quiet: bool, snapshot,
           repo_roles: str = "all", timeout_minutes: float | None = None) -> Outcome:
    from disputatio.workspace import Workspaces

    state = DebateState.from_events(led.events)
    started = state.started
    seats = _seats(started, debate_dir)
    protocol = protocols.get(started.protocol)
    no_repo = {state.judge} if state.judge and state.judge != state.synthesizer else set()
    names = list(state.participants) + [state.synthesizer] if repo_roles == "all" \
        else [state.synthesizer]
    names = [n for n in names if n is not None]
    if state.judge is not None and state.judge not in names:
        names.append(state.judge)
        no_repo.add(state.judge)
    progress = progress_view.make(quiet)
    progress.header(str(debate_dir), ", ".join(state.participants)
                    + (f" · judge {state.judge}" if state.judge else " · no judge"))
    transport.reset_interrupt()
    workspaces = Workspaces(snapshot, names, no_repo=no_repo)
    timeout_s = timeout_minutes * 60 if timeout_minutes else started.timeout_s
    engine = Engine(led, debate_dir, seats, workspaces, timeout_s, progress,
                    max_parallel=started.max_parallel)
    done: Done | None = None
    interrupted = False
    # the handlers stay in place until the ledger and artifacts are written: a second Ctrl-C
    # during cleanup must not cut the cleanup short
    with _interruptible() as flag:
        try:
            while True:
                state = DebateState.from_events(led.events)
                step = protocol.next_step(state)
                if isinstance(step, Done):
                    done = step
                    break
                if step.phase in ("respondeo", "redactio"):
                    # the debaters are finished: remove their checkouts while the judge works
                    workspaces.release([p for p in state.participants
                                        if p != state.synthesizer])
                engine.run(step)
                if flag.is_set():
                    interrupted = True
                    break
        finally:
            closing = time.monotonic()
            workspaces.close()
            cleanup_s = round(time.monotonic() - closing, 3)
            progress.close()
        if interrupted:
            _append(led, Interrupted(reason="signal"))
            _write(debate_dir, led.events, "interrupted", "run `disputatio --resume` to finish")
            return Outcome(EXIT_INTERRUPTED, debate_dir / "debate.md", "interrupted",
                           f"interrupted; finish it with: disputatio --resume --debate "
                           f"{debate_dir}")
        _append(led, DebateEnded(status=done.status, reason=done.reason, cleanup_s=cleanup_s))
        primary = _write(debate_dir, led.events, done.status, done.reason)
    if not quiet:
        print(_summary_line(led.events, done), file=sys.stderr)
    _warn_unbacked(led.events)
    code = EXIT_FAILED if done.status in ("aborted", "failed") else EXIT_OK
    message = done.reason if code else ""
    if done.status == "needs_input":
        message = (f"the judge needs your input: read {primary}, then answer with "
                   "disputatio --continue \"...\"")
    elif done.status == "unclear":
        message = (f"the judge's ruling has no clear STATUS line: read {primary}; "
                   "answer with disputatio --continue \"...\" to ask again")
    return Outcome(code, primary, done.status, message)


def _warn_unbacked(events) -> None:
    state = DebateState.from_events(events)
    w = summary.evidence_warning(summary.totals(summary.turns(events)),
                                 bool(state.started.repo))
    if w:
        warn(w)


def _summary_line(events, done: Done) -> str:
    views = summary.turns(events)
    t = summary.totals(views)
    wall = summary.wall_seconds(events)
    people = len(DebateState.from_events(events).participants)
    return (f"{done.status} · {people} participants · {t.turns} turns · "
            f"{summary.fmt_duration(wall)} · {summary.fmt_cost(t)} · "
            f"{summary.fmt_tokens(t.tokens, t.tokens_complete)}")


def _append(led: ledger.Ledger, event: EventData) -> None:
    led.append(event.TYPE, event.to_data())


def _write(debate_dir: Path, events, status: str, reason: str) -> Path:
    verdict = DebateState.from_events(events).latest_status()
    arts = render.render_all(events, status, reason, verdict)
    for name, content in arts.files.items():
        tmp = debate_dir / f".{name}.tmp"
        tmp.write_text(content, encoding="utf-8")
        os.replace(tmp, debate_dir / name)
    return debate_dir / arts.primary


class _Flag:
    def __init__(self):
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


@contextmanager
def _interruptible():
    """SIGINT/SIGTERM end every agent process tree; the loop then stops after the step."""
    flag = _Flag()

    def handler(signum, frame):
        flag.set()
        transport.interrupt_all()

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for s, h in old.items():
            signal.signal(s, h)


# --- helpers ----------------------------------------------------------------------------

def choose_fence(mode: str | None) -> fencing.Fence:
    """The write fence for this command's agents (``require`` without one: exit 2 before
    anything is made). Without a fence the debate still runs and the ledger says so; a warning
    too, unless the user turned it off."""
    try:
        fence = fencing.choose(mode or fencing.default_mode())
    except fencing.FenceUnavailable as exc:
        raise UsageError(str(exc)) from None
    if not fence.on and fence != fencing.OFF:
        warn(f"no write fence: {fence.reason}; only each CLI's own read-only settings keep "
             "the agents from writing outside their checkouts")
    transport.use_fence(fence)
    return fence


def _apply(cfg: DebateConfig, o: RunOptions) -> DebateConfig:
    """Flags over file values, validated like the file (``--rounds 25`` is refused too)."""
    data = cfg.model_dump(exclude_none=True)
    flags = {"rounds": o.rounds, "repo": o.repo, "timeout_minutes": o.timeout_minutes,
             "include_uncommitted": o.include_uncommitted,
             "max_parallel": o.max_parallel, "fence": o.fence}
    data.update({k: v for k, v in flags.items() if v is not None})
    try:
        return DebateConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise UsageError(f"--{where.replace('_minutes', '').replace('_', '-')}: "
                         f"{err['msg']}") from None


def check_binaries(cfg: DebateConfig) -> None:
    """Every CLI of the lineup must exist before a debate folder is made and tokens are spent."""
    from disputatio.engine import participant_bin

    seats = [*cfg.participants, *[p for p in (cfg.judge, cfg.synthesizer) if p is not None]]
    for p in seats:
        found = participant_bin(p)
        if Path(found).is_dir() or (Path(found).is_file() and not os.access(found, os.X_OK)):
            what = "a directory" if Path(found).is_dir() else "not executable"
            raise UsageError(f"{p.display}: '{found}' is {what}; set 'bin:' in the config to "
                             "the CLI's executable")
        if not Path(found).is_file():
            raise UsageError(f"{p.display}: '{found}' is not installed or not on PATH (set "
                             "'bin:' in the config, run disputatio --init, or try --demo)")


def _snapshot(repo: str | None, include_uncommitted: bool):
    """Clear what dead runs left behind, then snapshot the repository (None: no repository)."""
    from disputatio.workspace import open_snapshot, sweep_leftovers

    sweep_leftovers()
    transport.sweep_orphans()
    if not repo:
        return None
    snap = open_snapshot(Path(repo).expanduser(), include_uncommitted)
    for w in snap.warnings:
        warn(w)
    return snap


def _snapshot_from_ledger(led: ledger.Ledger):
    started = DebateState.from_events(led.events).started
    snap = _snapshot(started.repo, started.include_uncommitted)
    if snap is not None and started.snapshot and snap.commit != started.snapshot:
        warn(f"the repository has moved since the debate started ({started.snapshot[:10]}); "
             "agents now see the current state")
    return snap


def _write_lineup(debate_dir: Path, lineup: dict[str, Participant], judge: Participant,
                  synth: Participant, key: str | None = None) -> str:
    """The full lineup, env values included, in a file only the user can read: the ledger
    keeps a redacted copy, and a resumed debate must run the same CLIs with the same logins.
    The signing key asked for is kept too: a debate killed before its first signature is
    still signed by the command that finishes it."""
    data = {"lineup": {n: p.model_dump(exclude_none=True) for n, p in lineup.items()},
            "seats": {"judge": judge.model_dump(exclude_none=True) if judge else None,
                      "synthesizer": synth.model_dump(exclude_none=True) if synth else None},
            **({"sign": key} if key else {})}
    raw = json.dumps(data, indent=2, sort_keys=True).encode()
    fd = os.open(debate_dir / LINEUP_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(raw)
    return hashlib.sha256(raw).hexdigest()


def _seats(started: DebateStarted, debate_dir: Path, warn_edit: bool = True) -> dict[str, Seat]:
    path = debate_dir / (started.lineup_file or LINEUP_FILE)
    try:
        raw = path.read_bytes()
        private = json.loads(raw)
    except (OSError, ValueError):
        raise UsageError(f"{path}: missing or unreadable; the lineup (with its env values) "
                         "cannot be recovered, so this debate cannot go on") from None
    if warn_edit and started.lineup_sha256 not in (None, hashlib.sha256(raw).hexdigest()):
        warn(f"{path} was edited since the debate started; running the edited lineup")
    budget = started.budget_usd
    try:
        seats = {n: Seat(_entry(path, f"lineup.{n}", p)) for n, p in private["lineup"].items()}
        if started.judge is None:   # a lineup without a judge: the debaters only
            return seats
        seats[started.judge] = Seat(_entry(path, "seats.judge", private["seats"]["judge"]),
                                    budget)
        synth = started.synthesizer
        if synth is not None and synth not in seats:
            seats[synth] = Seat(_entry(path, "seats.synthesizer",
                                       private["seats"]["synthesizer"]), budget)
    except (KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{path}: no lineup entry at {exc}; fix the file, or start a new "
                         "debate") from None
    return seats


def _entry(path: Path, where: str, data: object) -> Participant:
    """A lineup entry as the user may have edited it to fix a debate: wrong is one line."""
    try:
        return Participant.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        at = ".".join([where, *(str(x) for x in err["loc"])])
        what = err["msg"].removeprefix("Value error, ")
        raise UsageError(f"{path}: {at}: {what}; fix the file, or start a new debate") from None


def _needs_judge(state: DebateState, debate_dir: Path, what: str) -> None:
    if state.judge is None:
        raise UsageError(f"{debate_dir}: this debate ran without a judge, so {what}; "
                         "add a 'judge:' to the lineup and start a new debate")


def _judge_name(judge: Participant | None) -> str | None:
    if judge is None:
        return None
    return judge.name or "judge"


def _synth_name(cfg: DebateConfig, synth: Participant) -> str:
    if cfg.synthesizer is None:
        return _judge_name(cfg.judge)
    return synth.name or "synthesizer"


def _public(p: Participant) -> dict:
    """A participant as recorded in the ledger and debate.json: no env values, no credentials."""
    return redact.participant(p.model_dump(exclude_none=True))


def _new_debate_dir(base: Path) -> Path:
    root = base / DEBATES
    root.mkdir(parents=True, exist_ok=True)
    ignore = root / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for n in range(1, 1000):
        path = root / (f"debate-{stamp}" + (f"-{n}" if n > 1 else ""))
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise UsageError(f"{root}: cannot create a debate folder")


def _find(debate: Path | None, base: Path | None) -> Path:
    if debate is not None:
        if not (debate / "events.jsonl").is_file():
            raise UsageError(f"{debate}: not a debate folder (no events.jsonl)")
        return debate
    root = (base or Path.cwd()) / DEBATES
    found = sorted(p for p in root.glob("debate-*") if (p / "events.jsonl").is_file()) \
        if root.is_dir() else []
    if not found:
        raise UsageError(f"no debate found under {root}; pass --debate DIR")
    return max(found, key=lambda p: p.name)


@contextmanager
def _open(debate: Path | None, base: Path | None, command: str, sign: bool):
    """The debate's ledger for its one writer: the lock first (another writer: ``Busy``), then
    the ledger read and verified under it, before anything (even mending a torn tail) touches
    it. Yields ``(debate_dir, ledger, signing key or None)``; the lock is held until the
    command is done."""
    debate_dir = _find(debate, base)
    key = _signing_key(True if sign else _asked_key(debate_dir), debate_dir)
    with ledger.WriterLock(debate_dir, command):
        path = debate_dir / "events.jsonl"
        ok, message = ledger.verify(path, _recorded(debate_dir))
        if not ok:
            raise BrokenLedger(f"{path} does not verify ({message}); refusing to add to it")
        try:
            led = ledger.Ledger(path)
        except ledger.LedgerError as exc:
            raise BrokenLedger(f"{exc}; refusing to add to it") from None
        if not led.events or led.events[0].type != "debate_started":
            raise UsageError(f"{debate_dir}: the ledger has no debate_started event")
        try:
            for _ in typed(led.events):
                pass
        except EventError as exc:
            raise BrokenLedger(f"{path}: {exc}; this version cannot read it, so refuses to "
                               "add to it") from None
        if key is not None and signing.signatures(debate_dir):
            try:
                ok, why = signing.check_own(debate_dir, [e.hash for e in led.events], key)
            except signing.SigningError as exc:
                raise UsageError(str(exc)) from None
            if not ok:  # signing on would vouch for whatever was forged since
                raise BrokenLedger(f"{path}: the head is not the one {key} signed ({why}); "
                                   "refusing to add to it")
        yield debate_dir, led, key


def _asked_key(debate_dir: Path) -> str | None:
    """The key the debate was started to be signed with (kept in lineup.json), if any."""
    try:
        key = json.loads((debate_dir / LINEUP_FILE).read_bytes()).get("sign")
    except (OSError, ValueError, AttributeError):
        return None
    return key if isinstance(key, str) and key else None


def _signing_key(choice: bool | str | None, debate_dir: Path | None = None) -> str | None:
    try:
        return signing.resolve_key(choice, debate_dir)
    except signing.SigningError as exc:
        raise UsageError(str(exc)) from None


def _signed(outcome: Outcome, led: ledger.Ledger, key: str | None) -> Outcome:
    """Sign the head the command leaves, while it still holds the lock. A signature that
    cannot be made fails the command: the user asked for one."""
    if key is None:
        return outcome
    try:
        signing.sign(led.path.parent, len(led.events), led.last_hash, key)
    except (OSError, signing.SigningError) as exc:
        status = outcome.status.replace("_", " ") or "recorded"
        return Outcome(EXIT_FAILED, outcome.path, "unsigned",
                       f"{exc} (the debate's own status: {status})")
    return outcome


def _recorded(debate_dir: Path) -> tuple[int, str] | None:
    """What debate.json says the ledger held when it was rendered (None: no such record)."""
    try:
        rec = json.loads((debate_dir / "debate.json").read_text())["ledger"]
        return int(rec["events"]), str(rec["head"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
