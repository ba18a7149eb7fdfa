"""The debate folders under a base and what ``list`` knows of each; nothing here writes.

``list`` stays fast with hundreds of debates by trusting a debate's ``debate.json`` whenever the
ledger's last line is the head it recorded (a few hundred bytes read from the end of the file);
only a debate whose artifacts are behind its ledger (one that is running, or crashed) is read
whole. A folder that cannot be read is listed with its problem. ``status`` says where a debate
stands from its ledger alone, for ``show`` and ``redact`` as for ``list``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from disputatio import ledger, procs
from disputatio.events import (
    AnswersGiven,
    DebateEnded,
    DebateStarted,
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
        rendered = fresh_record(path, events_path)
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


def fresh_record(path: Path, events_path: Path) -> dict | None:
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
            now, reason = "interrupted", "run `disputatio resume` to finish"
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

