"""Looking at debates: ``list`` (every debate under a base, newest first) and ``show`` (one
debate as text, markdown, json or a self-contained HTML page).

Both only read. ``list`` stays fast with hundreds of debates by trusting a debate's
``debate.json`` whenever the ledger's last line is the head it recorded (a few hundred bytes
read from the end of the file); only a debate whose artifacts are behind its ledger (one that is
running, or crashed) is read whole. A folder that cannot be read is listed with its problem.
``show`` renders from the ledger, the source of truth, through the debate's protocol, so it is
current for a debate still running as well.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from disputatio import ledger, procs
from disputatio.events import (
    AnswersGiven,
    DebateEnded,
    DebateStarted,
    EventError,
    FinalizeRequested,
    Interrupted,
    Resumed,
    started_event,
    typed,
)
from disputatio.outcome import UsageError
from disputatio.render import summary
from disputatio.text import one_line, sanitize

DEBATES = ".debate"
NEWEST = 20          # what `list` shows without --all
_NAME = re.compile(r"^debate-(\d{8}T\d{6}Z)(?:-(\d+))?$")
# the fields after ``data`` in a line the ledger wrote (canonical JSON: keys sorted)
_TAIL = re.compile(rb'"hash":"([0-9a-f]{64})","prev":"[0-9a-f]{64}","seq":(\d+),'
                   rb'"ts":"[^"]*","type":"[a-z_]+"\}\s*$')
_SESSION = (DebateStarted, Resumed, AnswersGiven, FinalizeRequested)


@dataclass
class Entry:
    """One debate as ``list`` shows it; ``problem`` says why the rest is unknown."""

    id: str
    path: str
    date: str = ""
    protocol: str = ""
    status: str = ""
    participants: list[str] = field(default_factory=list)
    turns: int | None = None
    cost_usd: float | None = None
    cost_complete: bool = True
    quaestio: str = ""
    problem: str | None = None


# --- finding debates -----------------------------------------------------------------------

def root(home: Path | None) -> Path:
    return (home or Path.cwd()) / DEBATES


def folders(home: Path | None) -> list[Path]:
    """Every ``debate-*`` folder under the base, newest first (by the UTC time in its name)."""
    base = root(home)
    if not base.is_dir():
        return []
    found = [p for p in base.glob("debate-*") if p.is_dir()]
    return sorted(found, key=_age, reverse=True)


def _age(path: Path) -> tuple:
    m = _NAME.match(path.name)
    return (m.group(1), int(m.group(2) or 1), "") if m else ("", 0, path.name)


def resolve(debate: str | None, home: Path | None) -> Path:
    """A debate folder from a path, an id (a folder name under the base, or the start of one
    that names only one) or nothing (the newest, as ``resume`` takes it)."""
    if debate is None:
        for path in folders(home):
            if (path / "events.jsonl").is_file():
                return path
        raise UsageError(f"no debate found under {root(home)}; see disputatio list")
    given = Path(debate)
    if given.is_dir():
        if not (given / "events.jsonl").is_file():
            raise UsageError(f"{given}: not a debate folder (no events.jsonl)")
        return given
    matches = [p for p in folders(home) if p.name == debate] or \
              [p for p in folders(home) if p.name.startswith(debate)
               or p.name.startswith(f"debate-{debate}")]
    if len(matches) > 1:
        raise UsageError(f"{debate!r} names {len(matches)} debates under {root(home)} "
                         f"({', '.join(p.name for p in matches[:3])}, ...); give more of it")
    if not matches:
        raise UsageError(f"no debate {debate!r} under {root(home)} (see disputatio list)")
    return matches[0]


# --- list ----------------------------------------------------------------------------------

def listing(home: Path | None, everything: bool = False,
            grep: str | None = None) -> tuple[list[Entry], int]:
    """The debates to show, newest first, and how many more there are (without --all only
    the newest ``NEWEST``). With ``grep`` only those whose quaestio, or one of the protocol's
    documents on disk (rulings, reports), contains it, case-insensitively."""
    paths = folders(home)
    limit = None if everything else NEWEST
    if grep is None:
        shown = paths if limit is None else paths[:limit]
        return [entry(p) for p in shown], len(paths) - len(shown)
    needle = grep.casefold()
    found: list[Entry] = []
    for n, path in enumerate(paths):
        e = entry(path)
        if _mentions(path, e, needle):
            if limit is not None and len(found) == limit:
                rest = sum(1 for p in paths[n:] if _mentions(p, entry(p), needle))
                return found, rest
            found.append(e)
    return found, 0


def _mentions(path: Path, e: Entry, needle: str) -> bool:
    if needle in e.quaestio.casefold():
        return True
    for doc in sorted(path.glob("*.md")):
        if doc.name == "debate.md":
            continue
        try:
            if needle in doc.read_text(encoding="utf-8", errors="replace").casefold():
                return True
        except OSError:
            continue
    return False


def entry(path: Path) -> Entry:
    """What ``list`` shows of one folder; never raises for a folder it cannot read."""
    e = Entry(id=path.name, path=str(path))
    events_path = path / "events.jsonl"
    try:
        if not events_path.is_file():
            raise UsageError("no events.jsonl (not a debate, or an unfinished copy)")
        first = _first_event(events_path)
        e.date = first.ts[:16].replace("T", " ")
        started = started_event([first])
        if started is None:
            raise UsageError("the ledger does not begin with debate_started")
        e.protocol = started.protocol
        rendered = _fresh_record(path, events_path)
        if rendered is not None:
            e.status = rendered["status"]
            e.participants = [p["name"] for p in rendered["participants"]]
            e.turns = rendered["totals"]["turns"]
            e.cost_usd = rendered["totals"]["cost_usd"]
            e.cost_complete = rendered["totals"]["cost_complete"]
            e.quaestio = rendered["quaestio"]
        else:
            events = ledger.load(events_path)
            e.status, _ = status(events, path)
            t = summary.totals(summary.turns(events))
            e.participants = list(started.participants)
            e.turns, e.cost_usd, e.cost_complete = t.turns, t.cost_usd, t.cost_complete
            e.quaestio = sanitize(started.quaestio)
    except (OSError, ValueError, KeyError, TypeError, ledger.LedgerError, UsageError) as exc:
        e.problem = _problem(exc)
        e.status = e.status or "unreadable"
    return e


def _problem(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return f"cannot read {Path(exc.filename).name if exc.filename else 'it'}: " \
               f"{exc.strerror or exc}"
    if isinstance(exc, KeyError | TypeError):
        return f"debate.json is not as this version writes it ({exc})"
    return one_line(str(exc), 200)


def _first_event(events_path: Path) -> ledger.Event:
    """The ledger's first event; what is wrong with it said of the ledger (a KeyError here
    is not debate.json's)."""
    with open(events_path, "rb") as fh:
        line = fh.readline()
    if not line.strip():
        raise UsageError("events.jsonl is empty")
    try:
        obj = json.loads(line)
        return ledger.Event(obj["seq"], obj["ts"], obj["type"], obj["data"], obj["prev"],
                            obj["hash"])
    except (ValueError, KeyError, TypeError):
        raise UsageError("events.jsonl:1: not a ledger event; see disputatio verify") from None


def _fresh_record(path: Path, events_path: Path) -> dict | None:
    """debate.json when it was rendered from the ledger as it is now, else None."""
    try:
        rendered = json.loads((path / "debate.json").read_text(encoding="utf-8"))
        head = rendered["ledger"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    with open(events_path, "rb") as fh:
        size = fh.seek(0, 2)
        fh.seek(max(0, size - 512))
        tail = fh.read()
    m = _TAIL.search(tail)
    if m is None or not isinstance(head, dict):
        return None
    if m.group(1).decode() != head.get("head") or int(m.group(2)) != head.get("events"):
        return None
    return rendered


def status(events, path: Path | None = None) -> tuple[str, str]:
    """Where a debate stands, from its ledger: the ending recorded last, else ``interrupted``,
    else ``running`` (a live process holds it) or ``unfinished`` (its process is gone)."""
    now, reason = "unfinished", "it stopped without an ending; finish it with disputatio resume"
    for _, e in typed(events):
        if isinstance(e, DebateEnded):
            now, reason = e.status, e.reason
        elif isinstance(e, Interrupted):
            now, reason = "interrupted", "run `disputatio --resume` to finish"
        elif isinstance(e, _SESSION):
            now, reason = "unfinished", "it stopped without an ending; finish it with " \
                                        "disputatio resume"
    if now == "unfinished" and path is not None and _writer_alive(path):
        return "running", ""
    return now, reason


def _writer_alive(path: Path) -> bool:
    """The debate's writer, as its lock file names it, is still a live process (it empties
    the file when it lets go; a process killed with -9 leaves its pid, which is then gone)."""
    try:
        holder = json.loads((path / ledger.LOCK_FILE).read_bytes() or b"{}")
        return procs.process_start(int(holder["pid"])) is not None
    except (OSError, ValueError, KeyError, TypeError):
        return False


def table(entries: list[Entry]) -> str:
    """Aligned columns, one debate a line: plain text that greps and pipes well."""
    head = ("ID", "DATE", "PROTOCOL", "STATUS", "PARTICIPANTS", "TURNS", "COST", "QUAESTIO")
    rows: list[tuple[str, ...]] = [head]
    rows += [(
        e.id, e.date, e.protocol, e.status, one_line(", ".join(e.participants), 40),
        "" if e.turns is None else str(e.turns), _cost(e),
        one_line(e.problem, 80) if e.problem else _short(e.quaestio)) for e in entries]
    rows = [tuple(one_line(c, 200) for c in r) for r in rows]   # a folder's text is foreign
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False))
                     + "  " + r[-1] for r in rows)


def as_json(entries: list[Entry]) -> str:
    return json.dumps([asdict(e) for e in entries], indent=2, ensure_ascii=False)


def _cost(e: Entry) -> str:
    if e.cost_usd is None:
        return "" if e.turns is None else "?"
    return f"${e.cost_usd:.2f}" + ("" if e.cost_complete else "+")


def _short(quaestio: str) -> str:
    text = quaestio.strip()
    first = text.splitlines()[0].lstrip("#>").strip() if text else ""
    return one_line(first, 60)


# --- show ----------------------------------------------------------------------------------

def load(path: Path) -> list[ledger.Event]:
    """The debate's events, for reading only (no lock taken, nothing mended)."""
    try:
        events = ledger.load(path / "events.jsonl")
    except ledger.LedgerError as exc:
        raise UsageError(f"{exc}; see disputatio verify") from None
    if not events or events[0].type != DebateStarted.TYPE:
        raise UsageError(f"{path}: the ledger has no debate_started event")
    return events


def look(events):
    """The debate's protocol's presentation of it (a protocol this version does not know:
    one line)."""
    from disputatio import protocols

    started = started_event(events)
    name = started.protocol if started else "disputatio"
    if name not in protocols.KNOWN:
        raise UsageError(f"this debate follows the protocol {name!r}, which this version of "
                         "disputatio does not know")
    protocol = protocols.get(name)
    try:
        return protocol.presentation(protocol.state(events))
    except EventError as exc:
        raise UsageError(f"cannot read this debate's ledger: {exc}") from None


def render(path: Path, fmt: str, color: bool = False, width: int | None = None) -> str:
    """One debate in one format: ``markdown`` and ``json`` are debate.md and debate.json as
    they are rendered from the ledger now; ``html`` a self-contained page; ``text`` for a
    terminal (colour only when ``color``)."""
    if fmt in ("markdown", "json") and _fresh_record(path, path / "events.jsonl"):
        try:   # rendered from the ledger as it is now: the file itself, byte for byte
            return (path / ("debate.md" if fmt == "markdown" else "debate.json")).read_text(
                encoding="utf-8")
        except OSError:
            pass
    events = load(path)
    now, reason = status(events, path)
    try:
        if fmt in ("markdown", "json"):
            from disputatio.render import report

            arts = report.render_all(events, now, reason, look(events))
            return arts.files["debate.md" if fmt == "markdown" else "debate.json"]
        if fmt == "html":
            from disputatio.render import html

            return html.render(events, now, reason, look(events))
        from disputatio.render.terminal import text_report

        return text_report(events, now, reason, look(events), color, width)
    except EventError as exc:
        raise UsageError(f"cannot read this debate's ledger: {exc}") from None


# --- the commands --------------------------------------------------------------------------

LIST_FORMATS = ("table", "json")
SHOW_FORMATS = ("text", "markdown", "json", "html")
PAGE = "debate.html"     # where show --open puts the HTML page when no --out is given


def list_command(home: Path | None, everything: bool, fmt: str, grep: str | None):
    """``disputatio list``: the table (or JSON) on stdout; what was left out on stderr."""
    import sys

    from disputatio.outcome import EXIT_OK, Outcome

    if fmt not in LIST_FORMATS:
        raise UsageError(f"--format must be table or json, not {fmt!r}")
    if home is not None and not home.is_dir():
        raise UsageError(f"--home {home}: no such directory")
    entries, more = listing(home, everything, grep)
    if fmt == "json":
        print(as_json(entries))
    elif entries:
        print(table(entries))
    if more:
        print(f"{more} older debate{'s' if more > 1 else ''} not shown (--all shows every "
              "one)", file=sys.stderr)
    if not entries and fmt == "table":
        what = f" mentioning {grep!r}" if grep is not None else ""
        print(f"no debate{what} under {root(home)}", file=sys.stderr)
    return Outcome(EXIT_OK, None, "listed")


def show_command(debate: str | None, home: Path | None, fmt: str, out: Path | None,
                 open_: bool):
    """``disputatio show``: the debate on stdout, or in ``out`` (its path on stdout); with
    ``open_`` in the default browser (the HTML page goes to debate.html in the debate folder
    when no --out is given)."""
    import os
    import shutil
    import sys

    from disputatio.outcome import EXIT_OK, Outcome

    if fmt not in SHOW_FORMATS:
        raise UsageError(f"--format must be text, markdown, json or html, not {fmt!r}")
    if out is not None and (not out.name or out.is_dir()):
        raise UsageError(f"--out {out}: a directory; name the file to write")
    path = resolve(debate, home)
    if open_ and out is None:
        if fmt != "html":
            raise UsageError("--open needs --out FILE, or --format html")
        out = path / PAGE
    tty = out is None and sys.stdout.isatty()
    color = fmt == "text" and tty and not os.environ.get("NO_COLOR")
    width = shutil.get_terminal_size().columns if tty else None
    content = render(path, fmt, color, width)
    if out is None:
        sys.stdout.write(content if content.endswith("\n") else content + "\n")
        return Outcome(EXIT_OK, None, "shown")
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        tmp.write_text(content, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"--out {out}: cannot write it: {exc.strerror or exc}") from None
    if open_:
        import webbrowser

        webbrowser.open(out.resolve().as_uri())
    return Outcome(EXIT_OK, out, "shown")
