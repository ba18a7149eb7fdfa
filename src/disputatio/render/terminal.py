"""One debate as text for a terminal: our structure styled, foreign text shown as it is.

Answers are printed as plain text, never as markup (rich's own or markdown): they are already
sanitized of terminal controls, and nothing in them can style or hyperlink anything. Colour only
when asked (a TTY); otherwise the same lines without a single escape sequence. Pure: events in,
a string out.
"""

from __future__ import annotations

import colorsys
import io
import re

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from disputatio.events import DebateStarted, started_event
from disputatio.render import summary
from disputatio.render.html import hue, labels_of
from disputatio.render.report import Look
from disputatio.render.safe_markdown import SHOWN, shown_bidi
from disputatio.text import cut, one_line
from disputatio.text import sanitize as _sanitize


def sanitize(text: str) -> str:
    """No control sequence, and no bidi control reordering what the terminal shows."""
    return shown_bidi(_sanitize(text))


def _block(text: str) -> str:
    """An answer as the page shows it: at most ``SHOWN`` characters, a longer one (a ledger
    edited by hand) cut and marked rather than left to stall the terminal."""
    return sanitize(cut(text, SHOWN, "in the ledger, events.jsonl")).strip()


def _line(text: str, limit: int = 300) -> str:
    return shown_bidi(one_line(text, limit))


_STRONG = re.compile(r"\*\*(.+?)\*\*")


def _ours(line: str) -> Text:
    """A line of ours written for debate.md (a heading, bold, an italic remark) as text: the
    terminal shows what it says, not its markdown."""
    text = sanitize(line)
    if text.startswith("#"):
        return Text(text.lstrip("#").strip(), style="bold")
    text = _STRONG.sub(r"\1", text)
    if len(text) > 2 and text[0] == text[-1] == "_":
        return Text(text[1:-1], style="italic")
    return Text(text)


def colour(label: str) -> str:
    """The participant's colour of the HTML report, for a terminal."""
    r, g, b = colorsys.hls_to_rgb(hue(label) / 360, 0.6, 0.65)
    return f"rgb({int(r * 255)},{int(g * 255)},{int(b * 255)})"


def text_report(events, status: str, reason: str, look: Look, color: bool,
                width: int | None = None) -> str:
    out = io.StringIO()
    console = Console(file=out, force_terminal=color, no_color=not color,
                      color_system="truecolor" if color else None, width=width or 100,
                      highlight=False, markup=False, emoji=False, soft_wrap=not color)
    started = started_event(events) or DebateStarted(quaestio="", rounds=0, participants=[])
    ran = summary.turns(events)
    views = sorted(ran, key=lambda v: look.order(v.turn, started.participants))
    labels = labels_of(started, views)

    def who(name: str) -> Text:
        return Text(_line(name, 100), style=f"bold {colour(name)}" if name in labels else "")

    console.print(Text(sanitize(started.quaestio).strip() or "(empty)", style="bold"))
    line = Text("status ", style="dim") + Text(_line(status, 100), style="bold")
    if reason:
        line += Text(f" — {_line(reason, 300)}")
    if look.verdict:
        line += Text(" · verdict ", style="dim") + Text(_line(look.verdict, 100),
                                                        style="bold")
    console.print(line)
    people = Text("participants ", style="dim")
    for n, name in enumerate(started.participants):
        people += (Text(", ") if n else Text("")) + who(name)
    if started.judge:
        people += Text(" · judge ", style="dim") + who(started.judge)
    console.print(people)
    console.print(Text(_line(f"started {events[0].ts if events else '?'} · protocol "
                                f"{started.protocol} · rounds {started.rounds}"), style="dim"))
    running = status == "running"
    for d in summary.degradations(views, look.where, running):
        console.print(Text("degraded: " + _line(d, 500), style="yellow"))

    for view in views:
        v = view.turn
        extras = look.interlude(v)
        if extras:
            console.print()   # apart from the answer above them
        for extra in extras:
            console.print(_ours(extra))
        state = {True: "answered", False: "failed",
                 None: "working" if running else "unfinished"}[view.ok]
        cost = "cost unknown" if v.cost_usd is None else f"${v.cost_usd:.2f}"
        title = Text(f"{_line(look.title(v), 200)} — ") + who(v.participant)
        console.print()
        console.print(Rule(title, align="left", style=colour(v.participant)
                           if v.participant in labels else ""))
        seat = v.seat or "participant"   # a seat named by its phase is said once
        phase = "" if v.phase == seat else f"{v.phase} · "
        console.print(Text(_line(f"{state} · {seat} · {phase}round "
                                    f"{v.round} · {v.adapter} · {cost} · "
                                    f"{summary.fmt_tokens(v.tokens)}"), style="dim"))
        if view.ok:
            console.print(Text(_block(v.text)))
        elif view.ok is False:
            console.print(Text(_line(f"Failed ({v.failure}): {v.message or ''}", 500),
                               style="red"))
        elif running:
            console.print(Text("Working… (the debate is running)", style="dim"))
        else:
            console.print(Text("Did not finish (interrupted during this turn).", style="red"))

    coda = look.coda()
    if coda:
        console.print()
    for extra in coda:
        console.print(_ours(extra))
    ended = [v.turn for v in ran if v.ok is not None]
    files, primary = look.documents(ended, "")
    if primary and primary in files:
        console.print()
        console.print(Rule(Text(_line(primary, 100), style="bold"), align="left"))
        console.print(Text(_block(files[primary])))
    t = summary.totals(views)
    console.print(Rule(style="dim"))
    console.print(Text(f"{t.turns} turns ({t.failed} failed) · {summary.fmt_cost(t)} · "
                       f"{summary.fmt_tokens(t.tokens, t.tokens_complete)} · "
                       f"wall time {summary.fmt_duration(summary.wall_seconds(events))}",
                       style="dim"))
    return out.getvalue()
