"""The command line: options in, one path on stdout, a documented exit code out.

Exit codes: 0 done (also NEEDS_INPUT), 1 debate failed or aborted (or --verify found a broken
or unsigned ledger, or --doctor an unhealthy CLI), 2 usage or config error, 75 the debate is in
use by another disputatio process (try again later), 130 interrupted.
"""

from __future__ import annotations

import math
import os
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer

from disputatio import __version__

cli = typer.Typer(add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})


def _version(value: bool) -> None:
    if value:
        print(f"disputatio {__version__}")
        raise typer.Exit(0)


def _finite(value: float | None) -> float | None:
    """click reads "inf" and "nan" as floats; a timeout or a budget must be a real number."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"must be a finite number, not {value}")
    return value


@cli.command(help="Run a structured debate between coding-agent CLIs and print the path of "
                  "the deliverable (final-report.md, else respondeo.md, else debate.md).")
def main_command(
    quaestio: Annotated[str | None, typer.Argument(
        help="The question to debate, e.g. \"Review the changes in this branch\".",
        show_default=False)] = None,
    file: Annotated[Path | None, typer.Option(
        "--file", help="Read the quaestio from this file.", show_default=False)] = None,
    config_path: Annotated[Path | None, typer.Option(
        "--config", help="Lineup YAML (default: the user config, else claude + codex).",
        show_default=False)] = None,
    repo: Annotated[str | None, typer.Option(
        "--repo", help="Give every agent its own checkout of this git repository.",
        show_default=False)] = None,
    include_uncommitted: Annotated[bool, typer.Option(
        "--include-uncommitted", help="Snapshot HEAD plus the working tree's changes.")] = False,
    rounds: Annotated[int | None, typer.Option(
        "--rounds", min=0, help="Reaction rounds after the proposals (0 allowed).",
        show_default=False)] = None,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", min=0.01, callback=_finite,
        help="Per-turn timeout in minutes (fractions allowed), for entries without their own.",
        show_default=False)] = None,
    budget: Annotated[float | None, typer.Option(
        "--budget", min=0.01, callback=_finite,
        help="Spend cap in USD for the judge and the synthesizer "
        "(where the CLI supports one).", show_default=False)] = None,
    max_parallel: Annotated[int | None, typer.Option(
        "--max-parallel", min=1, help="Agents running at once (default: no limit); the rest "
        "wait for a free slot.", show_default=False)] = None,
    demo: Annotated[bool, typer.Option(
        "--demo", help="Run with the built-in simulated lineup: no accounts, no model.")] = False,
    continue_answers: Annotated[str | None, typer.Option(
        "--continue", help="Answer the judge's questions and let it rule again.",
        show_default=False)] = None,
    finalize: Annotated[bool, typer.Option(
        "--finalize", help="Re-draft final-report.md from a resolved debate.")] = False,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Finish a debate that crashed or was interrupted.")] = False,
    verify: Annotated[bool, typer.Option(
        "--verify", help="Re-hash the ledger and name the first broken event.")] = False,
    allowed_signers: Annotated[Path | None, typer.Option(
        "--allowed-signers", help="With --verify: also prove that a key in this file (ssh-keygen "
        "allowed-signers format) signed the ledger's head.", show_default=False)] = None,
    sign: Annotated[bool, typer.Option(
        "--sign", help="Sign the ledger's head with your SSH key after the command (the key "
        "git signs with, else ~/.ssh/id_ed25519).")] = False,
    fence: Annotated[str | None, typer.Option(
        "--fence", help="The write fence around every agent: auto (when this machine has one), "
        "require (refuse to run without it) or off.", show_default=False)] = None,
    debate: Annotated[Path | None, typer.Option(
        "--debate", help="The debate folder for --continue/--finalize/--resume/--verify "
        "(default: the newest under ./.debate).", show_default=False)] = None,
    doctor: Annotated[bool, typer.Option(
        "--doctor", help="Check every CLI in the lineup with a short canary turn.")] = False,
    init: Annotated[bool, typer.Option(
        "--init", help="Find the installed CLIs and write a working user config.")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="With --init: overwrite the config without a backup.")] = False,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="No progress on stderr; warnings and errors only.")] = False,
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    from disputatio import app, config
    from disputatio.workspace import WorkspaceError

    try:
        actions = [n for n, on in (("--continue", continue_answers is not None),
                                   ("--finalize", finalize), ("--resume", resume),
                                   ("--verify", verify), ("--doctor", doctor),
                                   ("--init", init)) if on]
        if len(actions) > 1:
            raise app.UsageError(f"choose one of {', '.join(actions)}")
        given = {"a quaestio": quaestio is not None, "--file": file is not None,
                 "--config": config_path is not None, "--repo": repo is not None,
                 "--include-uncommitted": include_uncommitted, "--rounds": rounds is not None,
                 "--budget": budget is not None, "--demo": demo,
                 "--max-parallel": max_parallel is not None,
                 "--debate": debate is not None, "--force": force,
                 "--timeout": timeout is not None, "--sign": sign,
                 "--fence": fence is not None,
                 "--allowed-signers": allowed_signers is not None}
        allowed = {  # what each action can use; anything else given would be silently ignored
            None: {"a quaestio", "--file", "--config", "--repo", "--include-uncommitted",
                   "--max-parallel",
                   "--rounds", "--budget", "--demo", "--timeout", "--sign", "--fence"},
            "--continue": {"--debate", "--timeout", "--sign", "--fence"},
            "--finalize": {"--debate", "--timeout", "--sign", "--fence"},
            "--resume": {"--debate", "--timeout", "--sign", "--fence"},
            "--verify": {"--debate", "--allowed-signers"},
            "--doctor": {"--config", "--demo", "--timeout", "--fence"},
            "--init": {"--force", "--timeout"},
        }[actions[0] if actions else None]
        extra = [name for name, on in given.items() if on and name not in allowed]
        if extra:
            what = actions[0] if actions else "a new debate"
            raise app.UsageError(f"{', '.join(extra)} cannot be used with {what}")
        if fence is not None and fence not in ("auto", "require", "off"):
            raise app.UsageError(f"--fence must be auto, require or off, not {fence!r}")
        if demo and config_path is not None:
            raise app.UsageError("--demo brings its own lineup; drop --config, or drop --demo")
        if verify:
            outcome = app.verify(debate, allowed_signers=allowed_signers)
        elif continue_answers is not None:
            outcome = app.continue_(continue_answers, debate, quiet, timeout_minutes=timeout,
                                    sign=sign, fence=fence)
        elif finalize:
            outcome = app.finalize(debate, quiet, timeout_minutes=timeout, sign=sign,
                                   fence=fence)
        elif resume:
            outcome = app.resume(debate, quiet, timeout_minutes=timeout, sign=sign,
                                 fence=fence)
        elif doctor:
            from disputatio import doctor as doc

            cfg, _ = config.load(config_path, demo=demo)
            outcome = doc.doctor(cfg, timeout, fence)
        elif init:
            from disputatio import doctor as doc

            outcome = doc.init(force, timeout)   # never reads the config it may replace
        else:
            text = _quaestio(quaestio, file, demo)
            cfg, _ = config.load(config_path, demo=demo)
            outcome = app.run(text, cfg, app.RunOptions(
                rounds=rounds, repo=repo, timeout_minutes=timeout, budget_usd=budget,
                max_parallel=max_parallel,
                include_uncommitted=include_uncommitted or None, quiet=quiet, sign=sign,
                fence=fence))
    except (app.UsageError, config.ConfigError, WorkspaceError) as exc:
        _fail(str(exc), 2)
    except app.BrokenLedger as exc:
        _fail(str(exc), 1)
    except app.Busy as exc:
        _fail(str(exc), app.EXIT_BUSY)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        _fail(f"cannot access{where}: {exc.strerror or exc}", 1)
    except Exception as exc:  # a bug: one line, the ledger keeps what was done
        if os.environ.get("DISPUTATIO_DEBUG"):
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (set DISPUTATIO_DEBUG=1 for the "
              "traceback)", 1)
    if outcome.message:
        stream = sys.stderr
        print(outcome.message if outcome.code in (0, 130) or outcome.status == "verified"
              else f"error: {outcome.message}", file=stream)
    if outcome.path is not None:
        print(outcome.path)
    raise typer.Exit(outcome.code)


def _quaestio(quaestio: str | None, file: Path | None, demo: bool) -> str:
    from disputatio.app import UsageError

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


class _Interrupted(SystemExit):
    """Ctrl-C or SIGTERM before a use case installs its own handlers. Not a KeyboardInterrupt:
    typer turns that into a silent exit 130 (or, in releases built on click, into click's
    Abort) depending on where it lands; a SystemExit passes through typer untouched, and every
    ``finally`` on the way out still runs."""


def _interrupt(signum, frame) -> None:
    raise _Interrupted(130)


def main() -> None:
    """Console entry point: one ``error:`` line and a documented exit code for what happens
    before a use case takes over: typer's own usage errors (an unknown flag, ``--rounds -1``;
    exit 2) and Ctrl-C or SIGTERM at start-up (exit 130)."""
    old = {s: signal.signal(s, _interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = cli(prog_name="disputatio", standalone_mode=False)
    except (_Interrupted, typer.Abort):
        print("error: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:
        said = _framework_error(exc)
        if said is None:
            if os.environ.get("DISPUTATIO_DEBUG"):
                raise
            said = f"internal error: {type(exc).__name__}: {exc}", 1
        message, status = said
        hint = " (see disputatio --help)" if status == 2 else ""
        print(f"error: {message}{hint}", file=sys.stderr)
        sys.exit(status)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    sys.exit(code if isinstance(code, int) else 0)


def _framework_error(exc: Exception) -> tuple[str, int] | None:
    """typer's own errors, told by the interface click defined for them and typer keeps
    (``exit_code`` and ``format_message()``; a usage error has exit code 2) rather than by a
    class: typer exports no usage-error class, and the modules that hold one are private and
    differ between the releases built on click and those that vendor it."""
    status, fmt = getattr(exc, "exit_code", None), getattr(exc, "format_message", None)
    if isinstance(status, int) and callable(fmt):
        return str(fmt()), status
    return None
