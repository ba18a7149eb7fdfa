"""The command line: a command and its options in, one path on stdout, an exit code out.

``disputatio QUAESTIO`` means ``disputatio run QUAESTIO``: a first word that names no command
starts run's arguments (``_RunByDefault``). A quaestio that is exactly a command's name is given
after ``run`` or ``--``. The flags of the releases that had no commands (``--continue "…"``,
``--finalize``, ``--resume``, ``--verify``, ``--doctor``, ``--init``) stay hidden options of
``run`` that select the command of the same name, checked as they always were, so scripts keep
working. The exit codes and the errors they stand for are in ``outcome``; the use cases are
imported only once a command runs, so ``--help`` and completion stay fast.
"""

from __future__ import annotations

import functools
import math
import os
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup

from disputatio import __version__
from disputatio.dispatch import DEFAULT, Interrupted, act, interrupt
from disputatio.dispatch import Asked as _Asked


class _RunByDefault(TyperGroup):
    """Commands, with ``run`` as the default: any first word that is neither a command nor one
    of the group's own options (``--help``, ``--version``, completion) begins run's arguments."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        if self._runs(ctx, args):
            args = [DEFAULT, *args]
        return super().parse_args(ctx, args)

    def _runs(self, ctx, args: list[str]) -> bool:
        if not args:   # a bare `disputatio` runs (and says what is missing); <TAB> lists commands
            return not ctx.resilient_parsing
        if self.get_command(ctx, args[0]) is not None:
            return False
        own = {o for p in self.get_params(ctx) for o in (*p.opts, *p.secondary_opts)}
        return args[0].split("=", 1)[0] not in own


cli = typer.Typer(
    cls=_RunByDefault, rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Run structured debates between coding-agent CLIs. Without a command, run is meant: "
         "disputatio \"QUESTION\" [OPTIONS] starts a debate.",
    epilog="A quaestio that is exactly a command's name: disputatio run verify (or "
           "disputatio -- verify). The flags --continue \"ANSWERS\", --finalize, --resume, "
           "--verify, --doctor and --init still work in place of the command of the same name.")


def _version(value: bool) -> None:
    if value:
        print(f"disputatio {__version__}")
        raise typer.Exit(0)


def _finite(value: float | None) -> float | None:
    """click reads "inf" and "nan" as floats; a timeout or a budget must be a real number.
    The lower bound is checked here too, after finiteness: a range check would call nan
    "below the minimum"."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"must be a finite number, not {value}")
    if value is not None and value < 0.01:
        raise typer.BadParameter(f"must be at least 0.01, not {value}")
    return value


# --- options, declared once for every command that takes them -----------------------------
Quaestio = Annotated[str | None, typer.Argument(
    help="The question to debate, e.g. \"Review the changes in this branch\".",
    show_default=False)]
File = Annotated[Path | None, typer.Option(
    "--file", help="Read the quaestio from this file.", show_default=False)]
ConfigPath = Annotated[Path | None, typer.Option(
    "--config", help="Lineup YAML (default: the user config, else claude + codex).",
    show_default=False)]
Repo = Annotated[str | None, typer.Option(
    "--repo", help="Give every agent its own checkout of this git repository.",
    show_default=False)]
Uncommitted = Annotated[bool, typer.Option(
    "--include-uncommitted", help="Snapshot HEAD plus the working tree's changes.")]
Rounds = Annotated[int | None, typer.Option(
    "--rounds", min=0,
    help="disputatio: reaction rounds after the proposals (0 allowed); committee, "
    "wind-wall-door: the most rounds held (max_rounds, at least 1).",
    show_default=False)]
Timeout = Annotated[float | None, typer.Option(
    "--timeout", callback=_finite,
    help="Per-turn timeout in minutes (fractions allowed), for entries without their own.",
    show_default=False)]
Budget = Annotated[float | None, typer.Option(
    "--budget", callback=_finite,
    help="Spend cap in USD for the judge and the synthesizer (where the CLI supports one).",
    show_default=False)]
MaxCost = Annotated[float | None, typer.Option(
    "--max-cost", callback=_finite, help="Debate-wide cost cap in USD: a step that would "
    "pass it does not start; the debate stops (capped), resumable with a higher cap.",
    show_default=False)]
MaxParallel = Annotated[int | None, typer.Option(
    "--max-parallel", min=1, help="Agents running at once (default: no limit); the rest "
    "wait for a free slot.", show_default=False)]
Demo = Annotated[bool, typer.Option(
    "--demo", help="Use the built-in simulated lineup: no accounts, no model.")]
Protocol = Annotated[str | None, typer.Option(
    "--protocol", help="The protocol the debate follows (see disputatio protocols; default: "
    "disputatio).", show_default=False)]
Signers = Annotated[Path | None, typer.Option(
    "--allowed-signers", help="Also prove that a key in this file (ssh-keygen "
    "allowed-signers format) signed the ledger's head.", show_default=False)]
Sign = Annotated[bool, typer.Option(
    "--sign", help="Sign the ledger's head with your SSH key after the command (the key "
    "git signs with, else ~/.ssh/id_ed25519).")]
Fence = Annotated[str | None, typer.Option(
    "--fence", help="The write fence around every agent: auto (when this machine has one), "
    "require (refuse to run without it) or off.", show_default=False)]
DebateDir = Annotated[Path | None, typer.Option(
    "--debate", help="The debate folder (default: the newest under ./.debate).",
    show_default=False)]
Force = Annotated[bool, typer.Option(
    "--force", help="Overwrite the config without a backup.")]
Quiet = Annotated[bool, typer.Option(
    "--quiet", "-q", help="No progress on stderr; warnings and errors only.")]
HumanFlag = Annotated[bool, typer.Option(
    "--human", help="A human in the loop: after each round, agree with a participant, skip "
    "or steer, at the terminal (stdin and stderr must be one).")]
Version = Annotated[bool, typer.Option(
    "--version", callback=_version, is_eager=True, help="Print the version and exit.")]




# --- commands -------------------------------------------------------------------------------

@cli.callback()
def _root(version: Version = False) -> None:
    pass


@cli.command("run", short_help="Start a debate (the default command).",
             help="Run a structured debate between coding-agent CLIs and print the "
             "path of the deliverable (final-report.md, else respondeo.md, else the "
             "protocol's own: minutes.md, synthesis.md; else debate.md).")
def run_command(
    quaestio: Quaestio = None, file: File = None, config_path: ConfigPath = None,
    repo: Repo = None, include_uncommitted: Uncommitted = False, rounds: Rounds = None,
    timeout: Timeout = None, budget: Budget = None, max_parallel: MaxParallel = None,
    max_cost: MaxCost = None, demo: Demo = False, protocol: Protocol = None,
    sign: Sign = False, fence: Fence = None,
    quiet: Quiet = False, human: HumanFlag = False,
    # the flags of the releases without commands: accepted, not shown in run's help
    continue_answers: Annotated[str | None, typer.Option("--continue", hidden=True)] = None,
    finalize: Annotated[bool, typer.Option("--finalize", hidden=True)] = False,
    resume: Annotated[bool, typer.Option("--resume", hidden=True)] = False,
    verify: Annotated[bool, typer.Option("--verify", hidden=True)] = False,
    doctor: Annotated[bool, typer.Option("--doctor", hidden=True)] = False,
    init: Annotated[bool, typer.Option("--init", hidden=True)] = False,
    allowed_signers: Annotated[Path | None, typer.Option("--allowed-signers", hidden=True)] = None,
    debate: Annotated[Path | None, typer.Option("--debate", hidden=True)] = None,
    force: Annotated[bool, typer.Option("--force", hidden=True)] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          hidden=True)] = False,
) -> None:
    asked = _Asked(quaestio=quaestio, file=file, config_path=config_path, repo=repo,
                   include_uncommitted=include_uncommitted, rounds=rounds, budget=budget,
                   demo=demo, max_parallel=max_parallel, debate=debate, force=force,
                   timeout=timeout, sign=sign, fence=fence, allowed_signers=allowed_signers,
                   protocol=protocol, answers=continue_answers, quiet=quiet, human=human,
                   max_cost=max_cost)
    act(DEFAULT, asked, aliases={"--continue": continue_answers is not None,
                                  "--finalize": finalize, "--resume": resume,
                                  "--verify": verify, "--doctor": doctor, "--init": init})


@cli.command("continue", short_help="Answer the judge's questions; it rules again.",
             help="Answer the judge's questions; it rules again and, once "
             "resolved, the report is drafted.")
def continue_command(
    answers: Annotated[str, typer.Argument(help="Your answers to the judge's questions.",
                                           show_default=False)],
    debate: DebateDir = None, timeout: Timeout = None, sign: Sign = False,
    fence: Fence = None, quiet: Quiet = False, human: HumanFlag = False,
    max_cost: MaxCost = None,
) -> None:
    act("continue", _Asked(answers=answers, debate=debate, timeout=timeout, sign=sign,
                            fence=fence, quiet=quiet, human=human, max_cost=max_cost))


@cli.command("finalize", help="Re-draft final-report.md from a resolved debate.")
def finalize_command(debate: DebateDir = None, timeout: Timeout = None, sign: Sign = False,
                     fence: Fence = None, quiet: Quiet = False,
                     human: HumanFlag = False, max_cost: MaxCost = None) -> None:
    act("finalize", _Asked(debate=debate, timeout=timeout, sign=sign, fence=fence,
                            quiet=quiet, human=human, max_cost=max_cost))


@cli.command("resume", short_help="Finish a debate that crashed or was interrupted.",
             help="Finish a debate that crashed, was interrupted or stopped on a "
             "failure: only the unfinished and failed turns run again.")
def resume_command(debate: DebateDir = None, timeout: Timeout = None, sign: Sign = False,
                   fence: Fence = None, quiet: Quiet = False,
                   human: HumanFlag = False, max_cost: MaxCost = None) -> None:
    act("resume", _Asked(debate=debate, timeout=timeout, sign=sign, fence=fence,
                          quiet=quiet, human=human, max_cost=max_cost))


@cli.command("verify", help="Re-hash the ledger and name the first broken event.")
def verify_command(debate: DebateDir = None, allowed_signers: Signers = None) -> None:
    act("verify", _Asked(debate=debate, allowed_signers=allowed_signers))


@cli.command("doctor", help="Check every CLI of the lineup with a short canary turn.")
def doctor_command(config_path: ConfigPath = None, demo: Demo = False,
                   timeout: Timeout = None, fence: Fence = None) -> None:
    act("doctor", _Asked(config_path=config_path, demo=demo, timeout=timeout, fence=fence))


@cli.command("init", short_help="Find the CLIs, check each, write a user config.",
             help="Find the installed CLIs, check each, and write a working user config (an "
             "existing one is backed up unless --force).")
def init_command(force: Force = False, timeout: Timeout = None) -> None:
    act("init", _Asked(force=force, timeout=timeout))


@cli.command("redact", short_help="Replace a turn's text with a tombstone; verify stays green.",
             help="Replace a turn's text with [REDACTED: reason] in the ledger, "
             "every artifact and raw/; the hash chain still verifies.")
def redact_command(
    debate: Annotated[str, typer.Argument(help="The debate: its folder, or its id under "
                                          "./.debate.", show_default=False)],
    turn: Annotated[str, typer.Argument(help="The turn id (e.g. proposal/claude), or the "
                                        "seq of its event.", show_default=False)],
    reason: Annotated[str, typer.Option("--reason", help="Why (kept in the ledger).",
                                        show_default=False)],
) -> None:
    act("redact", _Asked(more={"debate": debate, "turn": turn, "reason": reason}))


@cli.command("watch", short_help="A live viewer of the debates, on 127.0.0.1.",
             help="A live viewer of the debates in the browser, on 127.0.0.1 only, "
             "with a read-only API (/v1/debates).")
def watch_command(
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="The port (0: any "
                                      "free one).")] = 8470,
    no_open: Annotated[bool, typer.Option("--no-open", help="Do not open a browser.")] = False,
    home: Annotated[Path | None, typer.Option("--home", help="Show the debates under DIR/"
                                              ".debate (default: the current directory).",
                                              show_default=False)] = None,
    human: Annotated[bool, typer.Option("--human", help="Let the page answer the questions "
                                        "of debates run with --human.")] = False,
) -> None:
    act("watch", _Asked(more={"port": port, "open": not no_open, "home": home,
                               "human": human}))


Home = Annotated[Path | None, typer.Option(
    "--home", help="Look under DIR/.debate (default: the current directory).",
    show_default=False)]


@cli.command("list", help="The debates under ./.debate, newest first: id, date, protocol, "
             "status, participants, turns, cost, quaestio. Without --all the newest 20.")
def list_command(
    everything: Annotated[bool, typer.Option("--all", help="Every debate, not only the "
                                             "newest 20.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    grep: Annotated[str | None, typer.Option("--grep", help="Only debates whose quaestio, "
                    "rulings or report mention TEXT (any case).", show_default=False)] = None,
    home: Home = None,
) -> None:
    act("list", _Asked(more={"home": home, "everything": everything, "fmt": fmt,
                              "grep": grep}))


@cli.command("show", help="One debate (a folder, an id, or the newest) as text, markdown, "
             "json or one self-contained HTML page.")
def show_command(
    debate: Annotated[str | None, typer.Argument(help="Its folder or id (default: the "
                                                 "newest).", show_default=False)] = None,
    fmt: Annotated[str, typer.Option("--format", help="text, markdown, json or html.")] = "text",
    out: Annotated[Path | None, typer.Option("--out", help="Write it to FILE; print FILE.",
                                             show_default=False)] = None,
    open_: Annotated[bool, typer.Option("--open", help="Open it in the browser (html "
                                        "without --out: the debate's debate.html).")] = False,
    home: Home = None,
) -> None:
    act("show", _Asked(more={"debate": debate, "home": home, "fmt": fmt, "out": out,
                              "open_": open_}))


@cli.command("review", help="Review a change with a debate and gate on its verdict: exit 0 "
             "no failing finding, 1 failing findings, 2 usage, 3 no verdict, 130 interrupted. "
             "Writes verdict.json and findings.sarif into the debate folder (docs/ci.md).")
def review_command(
    request: Annotated[str | None, typer.Argument(
        help="What to look for, added to the review's own request (e.g. \"the SQL\").",
        show_default=False)] = None,
    base: Annotated[str | None, typer.Option("--base", help="Review BASE...HEAD (from their "
                    "merge base).", show_default=False)] = None,
    head: Annotated[str | None, typer.Option("--head", help="The head (default HEAD).",
                    show_default=False)] = None,
    staged: Annotated[bool, typer.Option("--staged", help="The index against HEAD.")] = False,
    branch: Annotated[bool, typer.Option("--branch", help="This branch against its merge "
                      "base with --base, else origin/HEAD, main or master.")] = False,
    since: Annotated[str | None, typer.Option("--since", help="Only the commits after this "
                     "previously reviewed head, when it is an ancestor.",
                     show_default=False)] = None,
    fail_on: Annotated[str, typer.Option("--fail-on", help="The lowest severity that fails: "
                       "blocking, major, minor or info.")] = "blocking",
    fail_open: Annotated[bool, typer.Option("--fail-open", help="No verdict (exit 3) exits 0, "
                         "with a loud warning.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="path (of verdict.json) or json (the "
                   "verdict).")] = "path",
    prompt_file: Annotated[Path | None, typer.Option("--prompt-file", help="Read the "
                           "request from this file.", show_default=False)] = None,
    repo: Annotated[Path, typer.Option("--repo", help="The repository.")] = Path("."),
    config_path: ConfigPath = None, protocol: Protocol = None, rounds: Rounds = None,
    timeout: Timeout = None, budget: Budget = None, max_cost: MaxCost = None,
    max_parallel: MaxParallel = None, fence: Fence = None, demo: Demo = False,
    quiet: Quiet = False,
) -> None:
    act("review", _Asked(config_path=config_path, demo=demo, fence=fence, more=dict(
        request=request, base=base, head=head, staged=staged, branch=branch, since=since,
        fail_on=fail_on, fail_open=fail_open, fmt=fmt, prompt_file=prompt_file, repo=repo,
        protocol=protocol, rounds=rounds, timeout=timeout, budget=budget, max_cost=max_cost,
        max_parallel=max_parallel, quiet=quiet)))


@cli.command("protocols", help="List the protocols a debate can follow, one line each.")
def protocols_command() -> None:
    act("protocols", _Asked())


def main() -> None:
    """Console entry point: one ``error:`` line and a documented exit code for what happens
    before a use case takes over: typer's own usage errors (an unknown flag, ``--rounds -1``;
    exit 2) and Ctrl-C or SIGTERM at start-up (exit 130)."""
    from disputatio.entry import stop_signals
    from disputatio.streams import Lenient

    old = {s: signal.signal(s, interrupt) for s in stop_signals()}
    stderr, sys.stderr = sys.stderr, Lenient(sys.stderr)   # a reader may leave mid-debate
    try:
        code = _command()(prog_name="disputatio", standalone_mode=False)
    except (Interrupted, typer.Abort):
        print("error: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:
        said = _framework_error(exc)
        if said is None:
            if os.environ.get("DISPUTATIO_DEBUG"):
                raise
            said = f"internal error: {type(exc).__name__}: {exc}", 1
        message, status = said
        print(f"error: {message}{_hint(exc) if status == 2 else ''}", file=sys.stderr)
        sys.exit(status)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        sys.stderr = stderr
    sys.exit(code if isinstance(code, int) else 0)


@functools.cache
def _command():
    """The click command typer builds from ``cli``, built once per process: building it
    inspects every command's signature, which a host that runs many commands (the tests, an
    embedding tool) would otherwise pay each time."""
    return typer.main.get_command(cli)


def _framework_error(exc: Exception) -> tuple[str, int] | None:
    """typer's own errors, told by the interface click defined for them and typer keeps
    (``exit_code`` and ``format_message()``; a usage error has exit code 2) rather than by a
    class: typer exports no usage-error class, and the modules that hold one are private and
    differ between the releases built on click and those that vendor it."""
    status, fmt = getattr(exc, "exit_code", None), getattr(exc, "format_message", None)
    if isinstance(status, int) and callable(fmt):
        return str(fmt()), status
    return None


def _hint(exc: Exception) -> str:
    """Where the options of the command that refused the line are listed."""
    where = getattr(getattr(exc, "ctx", None), "command_path", None) or "disputatio"
    return f" (see {where} --help)"
