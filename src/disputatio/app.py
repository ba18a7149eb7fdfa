"""Use cases behind the CLI: run, continue, finalize, resume, verify. Each returns an Outcome;
the CLI only maps it to stdout and an exit code. Each takes a run context (a cancel token, a
warnings sink, ledger subscribers) and runs any protocol through its declared policy, so it can
be hosted by any face, from any thread; the debate folder's files are in ``folder``."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

from disputatio import __version__, config, costs, folder, ledger, protocols, redact, signing
from disputatio import progress as progress_view
from disputatio.adapters import transport
from disputatio.config import DebateConfig, Participant
from disputatio.context import RunContext
from disputatio.engine import Engine
from disputatio.events import (
    DebateEnded,
    DebateStarted,
    EventData,
    Interrupted,
    Resumed,
)
from disputatio.outcome import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    BrokenLedger,  # noqa: F401  (what a use case that appends raises for a broken ledger)
    Busy,  # noqa: F401  (what the writer lock raises from every use case that appends)
    Outcome,
    UsageError,
)
from disputatio.preflight import (  # the faces read RunOptions and choose_fence through app
    RunOptions,
    apply_flags,
    check_binaries,
    choose_fence,
    protocol_settings,
)
from disputatio.protocols import labels
from disputatio.protocols.base import Ask, Done, Refused
from disputatio.render import summary

LINEUP_FILE = folder.LINEUP_FILE
DEBATES = folder.DEBATES


def run(quaestio: str, cfg: DebateConfig, options: RunOptions, base: Path | None = None,
        protocol: str = "disputatio", context: RunContext | None = None) -> Outcome:
    """Start a new debate in ``<base>/.debate/debate-<UTC ts>/`` and carry it as far as it goes."""
    ctx = context or RunContext()
    if not quaestio.strip():
        raise UsageError("the quaestio is empty: give a question, or --file PATH")
    cfg = apply_flags(cfg, options)
    if cfg.include_uncommitted and not cfg.repo:
        raise UsageError("--include-uncommitted needs a repository (--repo PATH)")
    rules = protocols.get(protocol)
    settings = protocol_settings(rules, cfg, options)
    if options.human and ctx.human is None:
        raise UsageError("--human needs a terminal to ask you on")
    check_binaries(cfg)
    fence = choose_fence(cfg.fence, ctx)
    base = base or Path.cwd()
    snapshot = _snapshot(cfg.repo, cfg.include_uncommitted, ctx, options.at)
    seated = getattr(rules, "SEATED_JUDGES", "jury")   # who rules: judges.py
    for w in config.lineup_warnings(cfg, seated) + config.cost_warnings(cfg):
        ctx.warn(w)
    key = folder.signing_key(cfg.sign or options.sign or None)
    debate_dir = folder.new_dir(base)
    with ledger.WriterLock(debate_dir, "a new debate"):
        led = ledger.Ledger(debate_dir / "events.jsonl")
        synth = cfg.synthesizer or cfg.judge
        lineup = {p.display: p for p in cfg.participants}
        jury = config.jury_seats(cfg)
        lineup_sha = folder.write_lineup(debate_dir, lineup, cfg.judge, synth, key, jury)
        _append(led, DebateStarted(
            quaestio=quaestio, protocol=protocol, version=__version__,
            **rules.started(settings), timeout_s=cfg.timeout_minutes * 60,
            max_parallel=cfg.max_parallel,
            budget_usd=options.budget_usd, repo=str(Path(cfg.repo).resolve())
            if cfg.repo else None, include_uncommitted=cfg.include_uncommitted,
            snapshot=getattr(snapshot, "commit", None),
            participants=list(lineup), judge=_judge_name(cfg.judge),
            synthesizer=_synth_name(cfg),
            lineup={n: _public(p) for n, p in lineup.items()},
            seats={"judge": _public(cfg.judge) if cfg.judge else None,
                   "synthesizer": _public(synth) if synth else None,
                   **{k: _public(p) for k, p in jury.items()}},
            jury=config.jury_record(cfg),
            lineup_file=LINEUP_FILE, lineup_sha256=lineup_sha,
            config_file=str(source) if (source := cfg.source_file()) else None,
            human=True if options.human else None,
            labels=labels.assign(list(lineup)), seed=secrets.randbits(32),
            recusal=config.recusal_record(cfg, seated),
            max_cost_usd=cfg.max_cost_usd,
            prices={k: v.model_dump(exclude_none=True) for k, v in cfg.prices.items()} or None,
            review=options.review, **fence.record(),
        ))
        return folder.signed(_drive(debate_dir, led, options.quiet, snapshot, ctx), led, key)


def continue_(answers: str, debate: Path | None, quiet: bool = False,
              base: Path | None = None, timeout_minutes: float | None = None,
              sign: bool = False, fence: str | None = None,
              context: RunContext | None = None, max_cost_usd: float | None = None) -> Outcome:
    """Give the judge the human's answers; re-rule and, if resolved, draft the report."""
    if not answers.strip():
        raise UsageError("--continue needs the answers to the judge's questions")
    return _request("continue", answers, debate, quiet, base, timeout_minutes, sign, fence,
                    context, max_cost_usd)


def finalize(debate: Path | None, quiet: bool = False, base: Path | None = None,
             timeout_minutes: float | None = None, sign: bool = False,
             fence: str | None = None, context: RunContext | None = None,
             max_cost_usd: float | None = None) -> Outcome:
    """Re-draft final-report.md from a resolved debate."""
    return _request("finalize", "", debate, quiet, base, timeout_minutes, sign, fence, context,
                    max_cost_usd)


def _request(request: str, answers: str, debate: Path | None, quiet: bool, base: Path | None,
             timeout_minutes: float | None, sign: bool, fence: str | None,
             context: RunContext | None, max_cost_usd: float | None = None) -> Outcome:
    """A request the protocol accepts or refuses (``Refused``: one line, exit 2), appended as
    the event it names, then the debate's loop again."""
    ctx = context or RunContext()
    with folder.opened(debate, base, request, sign) as (debate_dir, led, key):
        rules, state = _rules(led)
        try:
            event = rules.accept(state, request, answers)
        except Refused as exc:
            raise UsageError(f"{debate_dir}: {exc}") from None
        folder.seats(state, debate_dir)  # unusable: fail before appending
        _human_present(state, debate_dir, ctx)
        chosen = choose_fence(fence, ctx)
        capped = costs.cap_field(max_cost_usd, type(event))
        event = event.model_copy(update={**chosen.record(), **capped})
        _append(led, event)
        return folder.signed(_drive(debate_dir, led, quiet, _snapshot_from_ledger(led, ctx),
                                    ctx, request=event, timeout_minutes=timeout_minutes),
                             led, key)


def resume(debate: Path | None, quiet: bool = False, base: Path | None = None,
           timeout_minutes: float | None = None, sign: bool = False,
           fence: str | None = None, context: RunContext | None = None,
           max_cost_usd: float | None = None) -> Outcome:
    """Finish a debate that crashed, was interrupted or stopped on a failure (or on its cost
    cap: ``max_cost_usd`` raises it): turns with no completion re-run, and so do the failed
    turns the protocol says it stopped on. A debate that is already done is left as it is."""
    ctx = context or RunContext()
    with folder.opened(debate, base, "resume", sign) as (debate_dir, led, key):
        rules, state = _rules(led)
        step = rules.next_step(state)
        retry: list[str] = []
        if isinstance(step, Done):
            again = rules.retry(state, step)
            if again is None:   # ended as its protocol says: the exit code that ending has
                primary = folder.write(debate_dir, led.events, step.status, step.reason)
                ending = rules.ending(step, str(primary))
                said = (f"nothing to resume: the debate has ended "
                        f"({step.status.replace('_', ' ')})")
                if ending.failed:
                    return Outcome(EXIT_FAILED, primary, step.status,
                                   f"{said}: {ending.message}" if ending.message else said)
                return Outcome(EXIT_OK, primary, step.status, said)
            retry = again
        folder.seats(state, debate_dir)  # unusable: fail before appending
        _human_present(state, debate_dir, ctx)
        chosen = choose_fence(fence, ctx)
        _append(led, Resumed(version=__version__, retry=retry, **chosen.record(),
                             **costs.cap_field(max_cost_usd, Resumed)))
        return folder.signed(_drive(debate_dir, led, quiet, _snapshot_from_ledger(led, ctx),
                                    ctx, timeout_minutes=timeout_minutes), led, key)


def verify(debate: Path | None, base: Path | None = None,
           allowed_signers: Path | None = None) -> Outcome:
    """Re-hash the chain; with ``allowed_signers``, also prove that a trusted key signed the
    head the ledger has now. Never takes the writer's lock: it only reads."""
    debate_dir = folder.find(debate, base)
    if allowed_signers is not None and not allowed_signers.is_file():
        raise UsageError(f"{allowed_signers}: no such allowed-signers file")
    path = debate_dir / "events.jsonl"
    try:
        ok, message = ledger.verify(path, folder.recorded(debate_dir))
        if ok and allowed_signers is not None:
            ok, signed = signing.check(debate_dir, [e.hash for e in ledger.load(path)],
                                       allowed_signers)
            message = f"{message}; {signed}" if ok else signed
        elif ok:
            message += signing.note(debate_dir)
    except OSError as exc:
        raise UsageError(f"{debate_dir}: cannot read the ledger: {exc.strerror}") from None
    except (ledger.LedgerError, signing.SigningError) as exc:
        raise UsageError(str(exc)) from None
    return Outcome(EXIT_OK if ok else EXIT_FAILED, None, "verified" if ok else "broken", message)


# --- the loop ---------------------------------------------------------------------------

def _rules(led: ledger.Ledger):
    """The debate's protocol and its state, replayed from the ledger."""
    from disputatio.events import started_event

    started = started_event(led.events)
    rules = protocols.get(started.protocol if started else "disputatio")
    return rules, rules.state(led.events)


def _drive(debate_dir: Path, led: ledger.Ledger, quiet: bool, snapshot, ctx: RunContext,
           request: EventData | None = None, timeout_minutes: float | None = None) -> Outcome:
    """Run the protocol's steps until it is done or the context is cancelled."""
    from disputatio.workspace import Workspaces

    rules, state = _rules(led)
    started = state.started
    ctx.debate_dir = debate_dir   # where a face may publish the human's question
    seats = folder.seats(state, debate_dir, ctx.warn)
    places = rules.places(state, request)
    view = progress_view.make(quiet)
    view.header(str(debate_dir), rules.lineup_line(state))
    follow = progress_view.follow(view)
    ctx.subscribers.append(follow)
    workspaces = Workspaces(snapshot, list(places.names), no_repo=places.no_repo)
    timeout_s = timeout_minutes * 60 if timeout_minutes else started.timeout_s
    engine = Engine(led, debate_dir, seats, workspaces, timeout_s, ctx,
                    max_parallel=started.max_parallel,
                    hidden=[Path(started.config_file)] if started.config_file else [])
    done: Done | None = None
    interrupted = False
    capped: costs.Check | None = None
    # armed until the ledger and artifacts are written: a second Ctrl-C during cleanup must
    # not cut the cleanup short (the CLI's handlers only cancel the token meanwhile)
    with ctx.cancel.arm():
        try:
            while True:
                state = rules.state(led.events)
                step = rules.next_step(state)
                if isinstance(step, Done):
                    done = step
                    break
                if isinstance(step, Ask):
                    with view.paused():   # the live table would redraw over the question
                        acted = ctx.human(step) if ctx.human is not None else None
                    if acted is None or ctx.cancel.cancelled:
                        interrupted = True
                        break
                    ctx.record(led, acted)
                    continue
                check = costs.check_step(led.events, step, seats)
                said = costs.opening_line(check)
                if said and not quiet:
                    ctx.note(said)
                if check.stop:
                    capped, done = check, Done(costs.CAPPED, costs.reason(check))
                    ctx.record(led, costs.capped_event(check))
                    break
                gone = rules.released(state, step)
                if gone:
                    workspaces.release(gone)
                view.phase(step.phase, [t.participant for t in step.turns])
                for line in step.notes:
                    ctx.warn(line)
                engine.run(step, check.budgets)
                if ctx.cancel.cancelled:
                    interrupted = True
                    break
        finally:
            closing = time.monotonic()
            workspaces.close()
            cleanup_s = round(time.monotonic() - closing, 3)
            view.close()
            ctx.subscribers.remove(follow)
        if interrupted or done is None:
            _append(led, Interrupted(reason="signal"))
            folder.write(debate_dir, led.events, "interrupted",
                         "run `disputatio resume` to finish")
            human = " --human" if state.asks_human else ""
            return Outcome(EXIT_INTERRUPTED, debate_dir / "debate.md", "interrupted",
                           f"interrupted; finish it with: disputatio resume{human} --debate "
                           f"{debate_dir}")
        _append(led, DebateEnded(status=done.status, reason=done.reason, cleanup_s=cleanup_s))
        primary = folder.write(debate_dir, led.events, done.status, done.reason)
    if not quiet:
        ctx.note(_summary_line(led.events, done))
    _warn_unbacked(led.events, ctx)
    if capped is not None:
        return Outcome(EXIT_FAILED, primary, costs.CAPPED, costs.capped_message(capped,
                                                                                debate_dir))
    ending = rules.ending(done, str(primary))
    said = "" if quiet and ending.closing else ending.message   # -q: the path alone
    return Outcome(EXIT_FAILED if ending.failed else EXIT_OK, primary, done.status, said)


def _human_present(state, debate_dir: Path, ctx: RunContext) -> None:
    """A debate with a human in the loop goes on only with someone to ask."""
    if state.asks_human and ctx.human is None:
        raise UsageError(f"{debate_dir}: this debate has a human in the loop; carry it on at a "
                         "terminal with --human")


def _warn_unbacked(events, ctx: RunContext) -> None:
    from disputatio.events import started_event

    started = started_event(events)
    w = summary.evidence_warning(summary.totals(summary.turns(events)),
                                 bool(started and started.repo))
    if w:
        ctx.warn(w)


def _summary_line(events, done: Done) -> str:
    from disputatio.events import started_event

    views = summary.turns(events)
    t = summary.totals(views)
    wall = summary.wall_seconds(events)
    started = started_event(events)
    people = len(started.participants) if started else 0
    return (f"{done.status} · {people} participants · {t.turns} turns · "
            f"{summary.fmt_duration(wall)} · {summary.fmt_cost(t)} · "
            f"{summary.fmt_tokens(t.tokens, t.tokens_complete)}")


def _append(led: ledger.Ledger, event: EventData) -> None:
    led.append(event.TYPE, event.to_data())


# --- the repository's snapshot, the lineup as recorded ----------------------------------

def _snapshot(repo: str | None, include_uncommitted: bool, ctx: RunContext,
              at: str | None = None):
    """Clear what dead runs left behind, then snapshot the repository (None: no repository)."""
    from disputatio.snapshot import open_snapshot
    from disputatio.temproots import sweep_leftovers

    sweep_leftovers()
    transport.sweep_orphans()
    if not repo:
        return None
    snap = open_snapshot(Path(repo).expanduser(), include_uncommitted, at)
    for w in snap.warnings:
        ctx.warn(w)
    return snap


def _snapshot_from_ledger(led: ledger.Ledger, ctx: RunContext):
    _, state = _rules(led)
    started = state.started
    # a review goes on over the head it reviews; any other debate sees the repository as it is
    pinned = started.snapshot if started.review and not started.include_uncommitted else None
    snap = _snapshot(started.repo, started.include_uncommitted, ctx, pinned)
    if snap is not None and started.snapshot and snap.commit != started.snapshot:
        ctx.warn(f"the repository has moved since the debate started ({started.snapshot[:10]}); "
             "agents now see the current state")
    return snap


def _judge_name(judge: Participant | None) -> str | None:
    if judge is None:
        return None
    return judge.name or "judge"


def _synth_name(cfg: DebateConfig) -> str | None:
    if cfg.synthesizer is None:
        return _judge_name(cfg.judge)
    return cfg.synthesizer.name or "synthesizer"


def _public(p: Participant) -> dict:
    """A participant as recorded in the ledger and debate.json: no env values, no credentials."""
    return redact.participant(p.model_dump(exclude_none=True))
