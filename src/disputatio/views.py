"""Looking at debates: ``list`` (every debate under a base, newest first) and ``show`` (one
debate as text, markdown, json or a self-contained HTML page).

Both only read. What ``list`` knows of each folder, and where a debate stands, is
``debates``'s (it trusts a current ``debate.json``); here are its table and JSON. ``show``
renders from the ledger, the source of truth, through the debate's protocol, so it is current
for a debate still running as well.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from disputatio import ledger
from disputatio.debates import (
    Entry,
    folders,
    fresh_record,
    listing,
    root,
    status,
)
from disputatio.events import DebateStarted, EventError, started_event
from disputatio.outcome import UsageError
from disputatio.text import one_line

# --- finding one debate ------------------------------------------------------------------

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
    if fmt in ("markdown", "json") and fresh_record(path, path / "events.jsonl"):
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
