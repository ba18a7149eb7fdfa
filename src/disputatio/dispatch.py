"""From a command line to its use case: what was asked (``Asked``), which old flags select
which command and what they may be combined with, the use cases each command runs, and the run
context the signal handlers cancel. Imports nothing heavy at module level: ``--help`` and
completion load this module too."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, fields
from pathlib import Path

import typer

DEFAULT = "run"
FENCES = ("auto", "require", "off")

@dataclass
class Asked:
    """Everything one command line asked for, whichever spelling it used."""

    quaestio: str | None = None
    file: Path | None = None
    config_path: Path | None = None
    repo: str | None = None
    include_uncommitted: bool = False
    rounds: int | None = None
    budget: float | None = None
    max_cost: float | None = None
    demo: bool = False
    max_parallel: int | None = None
    debate: Path | None = None
    force: bool = False
    timeout: float | None = None
    sign: bool = False
    fence: str | None = None
    allowed_signers: Path | None = None
    protocol: str | None = None
    answers: str | None = None
    quiet: bool = False
    human: bool = False
    more: dict | None = None   # a command's own arguments (redact, watch)


# --- from a command to its use case -----------------------------------------------------------

def act(command: str, asked: Asked, aliases: dict[str, bool] | None = None) -> None:
    """Run one command and exit with its code; ``aliases`` are the old flags run was given,
    which choose the command instead."""
    from disputatio import outcome

    try:
        if aliases is not None:
            command = _aliased(aliases, asked)
        if asked.fence is not None and asked.fence not in FENCES:
            raise outcome.UsageError(f"--fence must be auto, require or off, not "
                                     f"{asked.fence!r}")
        if asked.demo and asked.config_path is not None:
            raise outcome.UsageError("--demo brings its own lineup; drop --config, or drop "
                                     "--demo")
        if asked.human:
            from disputatio.human import refuse_without_terminal
            refuse_without_terminal()
        result = _USE_CASES[command](asked)
    except (Exception, KeyboardInterrupt) as exc:
        said = outcome.failure(exc)
        if said is None:  # a bug: one line, the ledger keeps what was done
            if os.environ.get("DISPUTATIO_DEBUG"):
                raise
            said = (f"internal error: {type(exc).__name__}: {exc} (set DISPUTATIO_DEBUG=1 "
                    "for the traceback)", outcome.EXIT_FAILED)
        if command == "review" and said[1] == outcome.EXIT_FAILED:
            said = _no_verdict(said[0], bool((asked.more or {}).get("fail_open")))
        _fail(*said)
    if result.message:
        print(result.message if result.code in (0, 130) or result.status == "verified"
              else f"error: {result.message}", file=sys.stderr)
    if result.path is not None:
        print(result.path)
    raise typer.Exit(result.code)


def _no_verdict(message: str, fail_open: bool) -> tuple[str, int]:
    """A review that broke down (a disk error, a bug) reached no verdict: exit 3, never 1 —
    1 says the change has failing findings; with --fail-open, 0 and a loud warning."""
    from disputatio.verdict import EXIT_NO_VERDICT

    if not fail_open:
        return f"{message} (no verdict)", EXIT_NO_VERDICT
    print(f"warning: FAIL-OPEN: the review reached no verdict and passes anyway: {message}",
          file=sys.stderr)
    return f"{message} (no verdict; --fail-open: exit 0)", 0


# what each old flag may be combined with; anything else given would be silently ignored
_ALLOWED = {
    None: {"a quaestio", "--file", "--config", "--repo", "--include-uncommitted",
           "--max-parallel", "--rounds", "--budget", "--demo", "--protocol", "--timeout",
           "--sign", "--fence", "--human", "--max-cost"},
    "--continue": {"--debate", "--timeout", "--sign", "--fence", "--human", "--max-cost"},
    "--finalize": {"--debate", "--timeout", "--sign", "--fence", "--human", "--max-cost"},
    "--resume": {"--debate", "--timeout", "--sign", "--fence", "--human", "--max-cost"},
    "--verify": {"--debate", "--allowed-signers"},
    "--doctor": {"--config", "--demo", "--timeout", "--fence"},
    "--init": {"--force", "--timeout"},
}
_FLAG_OF = {"quaestio": "a quaestio", "config_path": "--config", "answers": None, "more": None,
            "quiet": None}


def _aliased(aliases: dict[str, bool], asked: Asked) -> str:
    """The command the old flags select (none: run), refusing two of them, and refusing an
    option that command would ignore."""
    from disputatio.outcome import UsageError

    actions = [flag for flag, on in aliases.items() if on]
    if len(actions) > 1:
        raise UsageError(f"choose one of {', '.join(actions)}")
    action = actions[0] if actions else None
    given = [_FLAG_OF.get(f.name, "--" + f.name.replace("_", "-")) for f in fields(asked)
             if getattr(asked, f.name) is not None and getattr(asked, f.name) is not False]
    extra = [name for name in given if name is not None and name not in _ALLOWED[action]]
    if extra:
        raise UsageError(f"{', '.join(extra)} cannot be used with {action or 'a new debate'}")
    return action.removeprefix("--") if action else DEFAULT


def _run(asked: Asked):
    from disputatio import app, config, protocols
    from disputatio.outcome import UsageError

    if asked.protocol is not None and asked.protocol not in protocols.KNOWN:
        raise UsageError(f"no protocol named {asked.protocol!r}; the protocols are "
                             f"{', '.join(protocols.KNOWN)} (see disputatio protocols)")
    text = _quaestio(asked.quaestio, asked.file, asked.demo)
    cfg, _ = config.load(asked.config_path, demo=asked.demo)
    return app.run(text, cfg, app.RunOptions(
        rounds=asked.rounds, repo=asked.repo, timeout_minutes=asked.timeout,
        budget_usd=asked.budget, max_parallel=asked.max_parallel,
        include_uncommitted=asked.include_uncommitted or None, quiet=asked.quiet,
        sign=asked.sign, fence=asked.fence, human=asked.human, max_cost_usd=asked.max_cost),
        protocol=asked.protocol or "disputatio", context=_context(asked.human))


def _carry_on(command: str):
    """continue, finalize or resume: the debate's loop, started again on its ledger."""
    def use_case(asked: Asked):
        from disputatio import app, review  # a review's debate ends as a review: docs/ci.md

        if command == "continue":
            return review.carried_on(app.continue_(
                asked.answers or "", asked.debate, asked.quiet, timeout_minutes=asked.timeout,
                sign=asked.sign, fence=asked.fence, context=_context(asked.human),
                max_cost_usd=asked.max_cost))
        return review.carried_on((app.finalize if command == "finalize" else app.resume)(
            asked.debate, asked.quiet, timeout_minutes=asked.timeout, sign=asked.sign,
            fence=asked.fence, context=_context(asked.human), max_cost_usd=asked.max_cost))
    return use_case


def _verify(asked: Asked):
    from disputatio import app

    return app.verify(asked.debate, allowed_signers=asked.allowed_signers)


def _doctor(asked: Asked):
    from disputatio import app, config, doctor

    cfg, _ = config.load(asked.config_path, demo=asked.demo)
    fence = app.choose_fence(asked.fence or cfg.fence)
    cancel = _context().cancel   # Ctrl-C/SIGTERM end the canaries through it
    with cancel.arm():
        checkup = doctor.doctor(cfg, asked.timeout, fence, notice=_say, cancel=cancel)
    _say(checkup.lines())
    return checkup.outcome


def _init(asked: Asked):
    from disputatio import app, doctor

    fence = app.choose_fence(None)   # never reads the config it may replace
    cancel = _context().cancel
    with cancel.arm():
        checkup = doctor.init(asked.force, asked.timeout, fence, notice=_say, cancel=cancel)
    _say(checkup.lines())
    return checkup.outcome


def _protocols(asked: Asked):
    from disputatio import protocols
    from disputatio.outcome import EXIT_OK, Outcome

    width = max(map(len, protocols.KNOWN))
    for name in protocols.KNOWN:
        summary = (protocols.get(name).__doc__ or "").strip().splitlines()
        print(f"{name:<{width}}  {summary[0] if summary else ''}".rstrip())
    return Outcome(EXIT_OK, None, "listed")


def _say(lines: list[str]) -> None:
    for line in lines:
        print(line, file=sys.stderr)


_USE_CASES = {"run": _run, "continue": _carry_on("continue"), "finalize": _carry_on("finalize"),
              "resume": _carry_on("resume"), "verify": _verify, "doctor": _doctor,
              "init": _init, "protocols": _protocols,
              "redact": lambda asked: _redact(**asked.more),
              "watch": lambda asked: _watch(**asked.more),
              "list": lambda asked: _views("list_command", asked),
              "show": lambda asked: _views("show_command", asked),
              "review": lambda asked: _review(asked)}


def _review(asked: Asked):
    from disputatio import app, review  # the use case and its options: docs/ci.md

    m = dict(asked.more or {})
    run = app.RunOptions(rounds=m.pop("rounds"), timeout_minutes=m.pop("timeout"),
                         budget_usd=m.pop("budget"), max_cost_usd=m.pop("max_cost"),
                         max_parallel=m.pop("max_parallel"), quiet=m.pop("quiet"),
                         fence=asked.fence)
    request, prompt_file, fmt = m.pop("request"), m.pop("prompt_file"), m.pop("fmt")
    options = review.ReviewOptions(**m | {"protocol": m["protocol"] or "disputatio"}, run=run)
    return review.command(request, prompt_file, asked.config_path, asked.demo, fmt, options,
                          context=_context())


def _views(command: str, asked: Asked):
    from disputatio import views

    return getattr(views, command)(**(asked.more or {}))


def _redact(debate: str, turn: str, reason: str):
    from disputatio import redaction, views

    return redaction.redact(views.resolve(debate, None), turn, reason)


def _watch(port: int, open: bool, home: Path | None, human: bool = False):
    from disputatio import watch  # the server library loads only here

    return watch.serve(home or Path.cwd(), port, open_browser=open, human=human)


def _quaestio(quaestio: str | None, file: Path | None, demo: bool) -> str:
    from disputatio.outcome import UsageError

    if file is not None:
        if quaestio:
            raise UsageError("give the quaestio either as an argument or with --file, not both")
        try:
            return file.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{file}: cannot read the quaestio: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise UsageError(f"{file}: cannot read the quaestio: not UTF-8 text") from None
    if quaestio is not None:
        return quaestio
    if demo:
        return "Should we rewrite the backend in Rust?"
    raise UsageError("no quaestio: give a question, --file PATH, or try --demo")


def _fail(message: str, code: int) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise typer.Exit(code)


class Interrupted(SystemExit):
    """Ctrl-C or SIGTERM before a use case installs its own handlers. Not a KeyboardInterrupt:
    typer turns that into a silent exit 130 (or, in releases built on click, into click's
    Abort) depending on where it lands; a SystemExit passes through typer untouched, and every
    ``finally`` on the way out still runs."""


# the run context of the command being run: Ctrl-C and SIGTERM cancel it while its debate's
# loop runs (agents end, the ledger records it, exit 130); before that they stop the command
_running = None


def _context(human: bool = False):
    """A run context for this command, which the signal handlers cancel; with ``--human``
    it asks at the terminal."""
    global _running
    from disputatio.context import RunContext

    _running = RunContext()
    if human:
        from disputatio.human import TerminalHuman
        context = _running   # the face publishes each question in this debate's folder
        _running.human = TerminalHuman(_running.cancel, folder=lambda: context.debate_dir)
    return _running


def interrupt(signum, frame) -> None:
    if _running is not None and _running.cancel.armed:
        _running.cancel.cancel()
        return
    raise Interrupted(130)
