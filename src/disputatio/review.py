"""``disputatio review``: a debate over a change, as a gate a CI job or a git hook can act on.

The change is read from the user's repository with ``git diff`` and ``git merge-base`` only
(their repository is sacred: no checkout, no ref or index written, no filter or external diff
program run); the participants get the diff in the quaestio, cut visibly to a budget, and their
own checkout of the head. Afterwards the debate folder gets ``verdict.json`` and
``findings.sarif`` (``verdict.py``, ``sarif.py``) and the exit code says what CI needs to know.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from disputatio import app, events, ledger, verdict
from disputatio.config import DebateConfig
from disputatio.context import RunContext
from disputatio.gitenv import SAFE_FLAGS, WorkspaceError, git, one_line, user_env
from disputatio.outcome import EXIT_INTERRUPTED, EXIT_OK, Outcome, UsageError
from disputatio.protocols.base import QUAESTIO_BUDGET
from disputatio.text import cut, fair_caps

# the quaestio's budget: the review's own words, then the asker's request, the rest the diff's
WORDS_BUDGET = 1_500
PROMPT_BUDGET = 6_000
# where --branch looks for the branch it was made from, when --base does not say
DEFAULT_BASES = ("origin/HEAD", "origin/main", "origin/master", "main", "master")
_NO_EXTERNAL = ["--no-color", "--no-ext-diff", "--no-textconv", "--find-renames"]


@dataclass
class ReviewOptions:
    base: str | None = None
    head: str | None = None
    staged: bool = False
    branch: bool = False
    since: str | None = None      # the head a previous review saw: review only what came after
    fail_on: str = "blocking"
    fail_open: bool = False
    prompt: str | None = None
    protocol: str = "disputatio"
    repo: Path = field(default_factory=Path.cwd)
    run: app.RunOptions = field(default_factory=app.RunOptions)


@dataclass
class Change:
    """What is reviewed: the diff of ``base`` (a commit) to ``head`` (a commit, or None for the
    index), how it was chosen, and the changed paths."""

    mode: str                      # range | branch | staged
    base: str
    head: str | None
    diff: str
    files: list[str]
    root: Path
    note: str = ""                 # what was reviewed, in a sentence (incremental, etc.)
    incremental_from: str | None = None


def review(cfg: DebateConfig, o: ReviewOptions, base_dir: Path | None = None,
           context: RunContext | None = None) -> tuple[Outcome, dict | None]:
    """Review the change ``o`` names; the outcome's code is the review's (0 1 3 130) and its
    path is verdict.json. Also returns the verdict (None when nothing was reviewed)."""
    if o.fail_on not in verdict.SEVERITIES:
        raise UsageError(f"--fail-on must be one of {', '.join(verdict.SEVERITIES)}, "
                         f"not {o.fail_on!r}")
    ctx = context or RunContext()
    change = resolve(o)
    if change.note:
        ctx.warn(change.note)
    if not change.diff.strip():
        what = "the index has no changes against HEAD" if change.mode == "staged" else \
            f"no changes between {change.base[:12]} and {(change.head or '')[:12]}"
        return Outcome(EXIT_OK, None, "nothing", f"nothing to review: {what}"), None
    run = o.run
    run.repo = str(change.root)
    run.include_uncommitted = change.mode == "staged"
    run.at = change.head
    run.review = {"change": change_record(change), "fail_on": o.fail_on,
                  "fail_open": o.fail_open}
    outcome = app.run(quaestio(change, o.prompt), cfg, run, base=base_dir,
                      protocol=o.protocol, context=ctx)
    return conclude(outcome, run.review, o.protocol, ctx)


def conclude(outcome: Outcome, settings: dict, protocol: str,
             ctx: RunContext) -> tuple[Outcome, dict | None]:
    """The review's ending from its debate's: verdict.json and findings.sarif, and the exit
    code they give; an interrupted debate has no verdict (a stale one is taken away)."""
    if outcome.path is None:
        return outcome, None
    debate_dir = outcome.path.parent
    if outcome.code == EXIT_INTERRUPTED:
        for name in verdict.FILES:
            (debate_dir / name).unlink(missing_ok=True)
        return outcome, None
    v = verdict.build(debate_dir, settings["change"], settings["fail_on"],
                      settings["fail_open"], protocol)
    path = verdict.write(debate_dir, v, settings["change"]["files"])
    if v.get("warning"):
        ctx.warn(v["warning"])
    return Outcome(v["exit_code"], path, v["verdict"], verdict.summary_line(v)), v


def carried_on(outcome: Outcome, context: RunContext | None = None) -> Outcome:
    """After ``resume``, ``continue`` or ``finalize``: a review's debate ends as a review
    does, by the settings its ledger recorded; any other debate's outcome is left as it is."""
    record = outcome.path.parent / "events.jsonl" if outcome.path else None
    if record is None or not record.is_file():
        return outcome
    started = events.parse(ledger.load(record)[0])
    settings = getattr(started, "review", None)
    if not settings or not isinstance(started, events.DebateStarted):
        return outcome
    return conclude(outcome, settings, started.protocol, context or RunContext())[0]


def change_record(c: Change) -> dict:
    return {"mode": c.mode, "base": c.base, "head": c.head, "files": c.files,
            "incremental_from": c.incremental_from, "note": c.note or None}


# --- which change -------------------------------------------------------------------------

def resolve(o: ReviewOptions) -> Change:
    """The change the options name, read from the repository without writing to it."""
    given = [n for n, on in (("--base", o.base is not None and not o.branch),
                             ("--staged", o.staged), ("--branch", o.branch)) if on]
    if not given:
        raise UsageError("say what to review: --base REF (CI: the pull request's base), "
                         "--branch (this branch against its merge base) or --staged")
    if len(given) > 1:
        raise UsageError(f"choose one of {', '.join(given)}")
    if o.staged and (o.head or o.since):
        raise UsageError("--staged reviews the index against HEAD: drop --head and --since")
    root, env = _repo(o.repo)

    def run(*args: str, check: bool = True):
        # paths as they are (UTF-8), not octal escapes: the agents name them back to us
        return git(SAFE_FLAGS + ["-c", "core.quotePath=false", *args], env, cwd=root,
                   check=check)

    def commit(ref: str, flag: str) -> str:
        res = run("rev-parse", "-q", "--verify", "--end-of-options", ref + "^{commit}",
                  check=False)
        if res.returncode != 0:
            raise UsageError(f"{flag} {ref}: no such commit in {root}{_shallow(run)}")
        return res.stdout.decode().strip()

    if o.staged:
        head_sha = commit("HEAD", "HEAD")
        diff = run("diff", "--cached", *_NO_EXTERNAL, head_sha).stdout
        names = run("diff", "--cached", "--name-only", "-z", head_sha).stdout
        return Change("staged", head_sha, None, _text(diff), _names(names), root)
    head = commit(o.head or "HEAD", "--head")
    if o.branch:
        target = o.base or _default_base(run)
        base_ref = commit(target, "--base" if o.base else "--branch: its base")
    else:
        assert o.base is not None
        base_ref = commit(o.base, "--base")
    res = run("merge-base", base_ref, head, check=False)
    if res.returncode != 0:
        raise UsageError(f"{o.base or 'the base'} and {o.head or 'HEAD'} have no common "
                         "ancestor" + (_shallow(run) or ": give the base the change was made "
                                       "from"))
    base = res.stdout.decode().strip()
    change = Change("branch" if o.branch else "range", base, head, "", [], root)
    if o.since:
        _incremental(change, o.since, run)
    change.diff = _text(run("diff", *_NO_EXTERNAL, change.base, head).stdout)
    change.files = _names(run("diff", "--name-only", "-z", change.base, head).stdout)
    return change


def _incremental(change: Change, since: str, run) -> None:
    """Only the commits after ``since`` (the head a previous review saw) when it is an
    ancestor of the head; otherwise (a force-push, a rebase) the whole change, said so."""
    res = run("rev-parse", "-q", "--verify", "--end-of-options", since + "^{commit}",
              check=False)
    sha = res.stdout.decode().strip() if res.returncode == 0 else None
    if sha is None:
        change.note = (f"the previously reviewed head {since[:12]} is not in this repository "
                       "(a force-push, or a shallow clone?): reviewing the whole change")
        return
    if sha == change.base:
        return
    if sha == change.head:   # run again on the same head: a re-run must not turn into a pass
        change.note = (f"the head {sha[:12]} was reviewed before: reviewing the whole change "
                       "again")
        return
    ancestor = run("merge-base", "--is-ancestor", sha, change.head or "HEAD", check=False)
    inside = run("merge-base", "--is-ancestor", change.base, sha, check=False)
    if ancestor.returncode == 0 and inside.returncode == 0:
        change.base, change.incremental_from = sha, sha
        change.note = (f"incremental review: only the commits since {sha[:12]}, the head the "
                       "previous review saw")
    else:
        change.note = (f"the previously reviewed head {sha[:12]} is not an ancestor of "
                       f"{(change.head or '')[:12]} (a force-push or a rebase?): reviewing the "
                       "whole change")


def _repo(given: Path) -> tuple[Path, dict[str, str]]:
    try:
        env = user_env(given)
    except WorkspaceError as exc:
        raise UsageError(f"{given}: {exc}") from None
    except OSError:
        raise UsageError(f"{given}: no such directory") from None
    res = git(SAFE_FLAGS + ["rev-parse", "--show-toplevel"], env, cwd=given, check=False)
    if res.returncode != 0:
        raise UsageError(f"{given}: {one_line(res.stderr)} (review needs a git working tree)")
    return Path(res.stdout.decode().strip()), env


def _shallow(run) -> str:
    """What to do when the history a review needs is cut off ('' when it is not): CI
    checkouts fetch one commit unless told otherwise."""
    res = run("rev-parse", "--is-shallow-repository", check=False)
    if res.stdout.decode().strip() != "true":
        return ""
    return (", a shallow clone: fetch the history first (actions/checkout: fetch-depth: 0; "
            "elsewhere: git fetch --unshallow origin BASE-BRANCH)")


def _default_base(run) -> str:
    for ref in DEFAULT_BASES:
        if run("rev-parse", "-q", "--verify", ref + "^{commit}", check=False).returncode == 0:
            return ref
    raise UsageError("--branch: cannot tell which branch this one was made from (none of "
                     f"{', '.join(DEFAULT_BASES)} exists): give it as --base REF")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def _names(raw: bytes) -> list[str]:
    return [n.decode("utf-8", errors="replace") for n in raw.split(b"\0") if n]


# --- the quaestio -------------------------------------------------------------------------

_FILE_START = re.compile(r"^diff --git ", re.MULTILINE)


def quaestio(c: Change, prompt: str | None) -> str:
    """The review's question: what to do, what is reviewed, the asker's prompt and the diff
    (each file's part cut to a fair share of the budget, every cut marked)."""
    head = "the index (staged changes)" if c.head is None else c.head[:12]
    what = {"staged": f"the staged changes against HEAD ({c.base[:12]})",
            "branch": f"this branch ({head}) against its merge base {c.base[:12]}",
            "range": f"{c.base[:12]}..{head}"}[c.mode]
    if c.incremental_from:
        what += " — only the commits since the previous review"
    request = cut(prompt.strip(), PROMPT_BUDGET, "of the request not shown") \
        if prompt and prompt.strip() else ""
    diff, was_cut = fit(c.diff, QUAESTIO_BUDGET - WORDS_BUDGET - len(request), c.base)
    lines = [
        f"Review this change before it is merged: {what}, {len(c.files)} file(s).",
        "",
        "Your checkout is the repository with the change applied; `git diff "
        f"{c.base[:12]}` in it shows the whole change"
        + (" (the diff below is cut: read the rest there)." if was_cut else "."),
        "Read the code around the change and run what proves a point (tests, a build); do "
        "not edit files. Report each problem with the file (a path from the repository root) "
        "and the line in the changed version it concerns, and how grave it is: blocking (must "
        "not be merged as it is), major, minor or info. Finding no problem is a valid answer.",
    ]
    if request:
        lines += ["", "What to look for, as the reviewer's request says:", "", request]
    fence = "`" * max(3, _longest_run(diff, "`") + 1)
    lines += ["", "The diff:", "", fence + "diff", diff.rstrip("\n"), fence]
    return "\n".join(lines) + "\n"


def fit(diff: str, budget: int, base: str) -> tuple[str, bool]:
    """The diff within ``budget`` characters: each file's part keeps a fair share (short
    ones whole), a cut part ends with a marker naming the command that shows the rest."""
    starts = [m.start() for m in _FILE_START.finditer(diff)] or [0]
    if starts[0] != 0:
        starts.insert(0, 0)
    parts = [diff[a:b] for a, b in zip(starts, [*starts[1:], len(diff)], strict=True)]
    caps = fair_caps([len(p) for p in parts], budget)
    out = []
    for part, cap in zip(parts, caps, strict=True):
        first = part.split("\n", 1)[0]
        path = ""
        if first.startswith("diff --git "):   # a b/ path git had to quote stays quoted
            path = '"' + first.rsplit(' "b/', 1)[-1] if first.endswith('"') else \
                first.rsplit(" b/", 1)[-1]
        where = f"of this file's diff: git diff {base[:12]} -- {path}" if path else \
            f"of the diff: git diff {base[:12]}"
        out.append(cut(part, cap, where) + ("\n" if len(part) > cap else ""))
    return "".join(out), sum(caps) < len(diff)


def _longest_run(text: str, ch: str) -> int:
    runs = re.findall(re.escape(ch) + "+", text)
    return max((len(r) for r in runs), default=0)


def dumps(v: dict) -> str:
    return json.dumps(v, indent=2, ensure_ascii=False)


# --- the command --------------------------------------------------------------------------

def command(quaestio: str | None, prompt_file: Path | None, config_path: Path | None,
            demo: bool, fmt: str, options: ReviewOptions,
            context: RunContext | None = None) -> Outcome:
    """``disputatio review``: the lineup, the request, the review; with ``--format json`` the
    verdict itself is printed on stdout instead of the path of verdict.json."""
    import sys

    from disputatio import config, protocols

    if fmt not in ("path", "json"):
        raise UsageError(f"--format must be path or json, not {fmt!r}")
    if options.protocol not in protocols.KNOWN:
        raise UsageError(f"no protocol named {options.protocol!r}; the protocols are "
                         f"{', '.join(protocols.KNOWN)}")
    if quaestio is not None and prompt_file is not None:
        raise UsageError("give the request either as an argument or with --prompt-file")
    if prompt_file is not None:
        try:
            quaestio = prompt_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or "not UTF-8 text"
            raise UsageError(f"{prompt_file}: cannot read the request: {why}") from None
    options.prompt = quaestio
    cfg, _ = config.load(config_path, demo=demo)
    outcome, v = review(cfg, options, context=context)
    if fmt == "json" and v is not None:
        print(dumps(v), file=sys.stdout, flush=True)
        outcome.path = None
    return outcome
