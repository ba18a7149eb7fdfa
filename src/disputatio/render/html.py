"""One debate as a single self-contained HTML page: events in, a string out. Pure.

The page loads nothing: no script, no remote asset, no external stylesheet. Its one ``<style>``
is allowed by its hash in a ``Content-Security-Policy`` that allows nothing else, so even a
mistake that let markup through could neither run nor fetch. Every foreign text (answers, the
quaestio, names, messages) is escaped before anything is made of it (``safe_markdown``).

What a protocol shows — a turn's title, the lines between turns, its documents and which one is
the deliverable — comes from its ``Presentation`` (``report.Look``), as for debate.md; the
deliverable and the other documents (for disputatio the report and the rulings) come first.
The pieces (``CSS``, ``turn``, ``page``) are public so a live view can build the same page.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape

from disputatio.events import AnswersGiven, DebateStarted, started_event, typed
from disputatio.render import summary
from disputatio.render.report import Look
from disputatio.render.safe_markdown import to_html
from disputatio.text import one_line, sanitize

CSS = """
:root { color-scheme: light dark; --fg: #1d1f23; --bg: #fbfaf7; --muted: #5d6470;
  --line: #d9d6cf; --card: #ffffff; --code: #f1efe9; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e4df; --bg: #17181b; --muted: #9aa1ab;
  --line: #33363c; --card: #1f2125; --code: #2a2c31; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 62rem; padding: 1.5rem; background: var(--bg);
  color: var(--fg); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif;
  overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; margin: 0 0 .5rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .75rem; border-bottom: 1px solid var(--line); }
.meta, .turn-meta { color: var(--muted); font-size: .9rem; }
.meta dt { font-weight: 600; float: left; clear: left; min-width: 9rem; }
.meta dd { margin: 0 0 .2rem 9rem; }
.chip { display: inline-block; padding: 0 .5rem; border-radius: 1rem; font-size: .85rem;
  font-weight: 600; color: hsl(var(--hue) 60% 28%); background: hsl(var(--hue) 70% 90%);
  border: 1px solid hsl(var(--hue) 50% 70%); }
.status { font-weight: 700; text-transform: uppercase; letter-spacing: .03em; }
.degraded { border-left: 4px solid #c2410c; padding: .25rem .75rem; background: var(--card); }
.document { background: var(--card); border: 1px solid var(--line); border-radius: .5rem;
  padding: .5rem 1.25rem 1rem; margin: 1rem 0; }
.document.primary { border: 2px solid #2563eb; box-shadow: 0 2px 10px rgb(0 0 0 / .08); }
.doc-name { font-size: .8rem; text-transform: uppercase; color: var(--muted);
  margin-top: .5rem; }
.turn { background: var(--card); border: 1px solid var(--line);
  border-left: 6px solid hsl(var(--hue) 65% 50%); border-radius: .4rem;
  padding: .5rem 1.25rem 1rem; margin: 1rem 0; }
.turn > header h3 { margin: .25rem 0; font-size: 1.05rem; }
.turn.failed { border-left-style: dashed; }
.turn .failure { color: #b91c1c; font-weight: 600; }
.interlude { border-left: 3px solid var(--line); padding-left: 1rem; }
pre { background: var(--code); padding: .75rem; border-radius: .3rem; overflow-x: auto;
  white-space: pre; max-height: 40rem; }
code { background: var(--code); padding: 0 .2rem; border-radius: .2rem;
  font: .9em ui-monospace, "SFMono-Regular", Menlo, monospace; }
pre code { padding: 0; }
.unbroken { overflow-wrap: normal; word-break: break-all; }
blockquote { margin: .5rem 0; padding-left: 1rem; border-left: 3px solid var(--line);
  color: var(--muted); }
footer { margin-top: 2rem; color: var(--muted); font-size: .9rem; }
"""


def hue(label: str) -> int:
    """A participant's colour, the same for the same label in every report and viewer."""
    return int.from_bytes(hashlib.sha256(label.encode()).digest()[:4], "big") % 360


def csp(style: str) -> str:
    """Nothing may load or run; only this exact stylesheet applies."""
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    return (f"default-src 'none'; style-src 'sha256-{digest}'; img-src 'none'; "
            "base-uri 'none'; form-action 'none'")


def page(title: str, body: str, labels: list[str]) -> str:
    """A whole document: the stylesheet (one colour class per label, ``p-<n>`` in the order
    given) under its own hash, and ``body`` as it is (already safe HTML)."""
    style = CSS + "".join(f".p-{n} {{ --hue: {hue(label)}; }}\n"
                          for n, label in enumerate(labels))
    return ("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp(style)}\">\n"
            "<meta name=\"referrer\" content=\"no-referrer\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{escape(title)}</title>\n<style>{style}</style>\n</head>\n"
            f"<body>\n{body}\n</body>\n</html>\n")


def labels_of(started: DebateStarted, views: list[summary.TurnView]) -> list[str]:
    """Everyone who may appear, each once: debaters, the seats, then anyone else who took a
    turn (a ledger from elsewhere)."""
    seen = [*started.participants, started.judge, started.synthesizer,
            *(v.turn.participant for v in views)]
    return list(dict.fromkeys(x for x in seen if x))


def chip(name: str, labels: list[str]) -> str:
    cls = f" p-{labels.index(name)}" if name in labels else ""
    return f"<span class=\"chip{cls}\">{escape(one_line(name, 100))}</span>"


def render(events, status: str, reason: str, look: Look) -> str:
    """The debate's page: header, the protocol's documents (the deliverable first), the
    quaestio, every turn in the protocol's order, totals."""
    started = started_event(events) or DebateStarted(quaestio="", rounds=0, participants=[])
    ran = summary.turns(events)   # in the order they started
    views = sorted(ran, key=lambda v: look.order(v.turn, started.participants))
    labels = labels_of(started, views)
    title = _title(started.quaestio)
    parts = [f"<header>\n<h1>{escape(title)}</h1>",
             _facts(events, started, status, reason, look, labels), "</header>"]
    running = status == "running"
    degraded = summary.degradations(views, look.where, running)
    if degraded:
        parts.append("<section class=\"degraded\"><h2>Degraded</h2><ul>"
                     + "".join(f"<li>{escape(one_line(d, 500))}</li>" for d in degraded)
                     + "</ul></section>")
    parts.append(_documents([v.turn for v in ran if v.ok is not None], look))
    parts.append("<section class=\"quaestio\"><h2>Quaestio</h2>"
                 f"{to_html(started.quaestio)}</section>")
    answers = [a.answers for _, a in typed(events) if isinstance(a, AnswersGiven)]
    parts.append(f"<section class=\"turns\"><h2>Turns ({len(views)})</h2>")
    for view in views:
        extra = look.interlude(view.turn)
        if extra:
            parts.append(f"<div class=\"interlude\">{to_html(chr(10).join(extra), 0)}</div>")
        parts.append(turn(view, look, labels, running))
    coda = look.coda()   # what happened once no turn followed the last one
    if coda:
        parts.append(f"<div class=\"interlude coda\">{to_html(chr(10).join(coda), 0)}</div>")
    parts.append("</section>")
    t = summary.totals(views)
    wall = summary.fmt_duration(summary.wall_seconds(events))
    parts.append(f"<footer class=\"totals\">{t.turns} turns ({t.failed} failed) · wall time "
                 f"{wall} · agent time {summary.fmt_duration(t.agent_s)} · "
                 f"{escape(summary.fmt_cost(t))} · "
                 f"{escape(summary.fmt_tokens(t.tokens, t.tokens_complete))} · "
                 f"{escape(summary.evidence_line(t))}"
                 + (f" · {len(answers)} answers from the human" if answers else "")
                 + "</footer>")
    return page(f"Debate: {title}", "\n".join(parts), labels)


def turn(view: summary.TurnView, look: Look, labels: list[str], running: bool = False) -> str:
    """One turn: who, where, how it ended (or that it is at work, in a running debate), what
    it cost, and its answer."""
    v = view.turn
    state = {True: "answered", False: "failed",
             None: "working" if running else "unfinished"}[view.ok]
    meta = [f"{escape(v.seat or 'participant')}", f"{escape(v.phase)}", f"round {v.round}",
            escape(v.adapter) + (f" ({escape(one_line(v.model, 80))})" if v.model else "")]
    if v.duration_s is not None:
        meta.append(summary.fmt_duration(v.duration_s))
    meta.append("cost unknown" if v.cost_usd is None else f"${v.cost_usd:.2f}")
    meta.append(escape(summary.fmt_tokens(v.tokens)))
    if view.ok:
        body = to_html(v.text)
    elif view.ok is False:
        body = (f"<p class=\"failure\">Failed ({escape(v.failure or '?')}): "
                f"{escape(one_line(v.message or '', 500))}</p>")
    elif running:
        body = "<p>Working… (the debate is running)</p>"
    else:
        body = "<p class=\"failure\">Did not finish (interrupted during this turn).</p>"
    cls = f" p-{labels.index(v.participant)}" if v.participant in labels else ""
    return (f"<article class=\"turn {state}{cls}\" id=\"{_anchor(v.turn_id)}\" "
            f"data-turn-id=\"{escape(v.turn_id)}\">\n<header><h3>"
            f"{escape(look.title(v))} — {chip(v.participant, labels)}</h3>"
            f"<div class=\"turn-meta\"><span class=\"status\">{state}</span> · "
            + " · ".join(meta) + "</div></header>\n"
            f"<div class=\"answer\">{body}</div>\n</article>")


def _facts(events, started: DebateStarted, status: str, reason: str, look: Look,
           labels: list[str]) -> str:
    rows = [("Status", f"<span class=\"status\">{escape(status)}</span>"
             + (f" — {escape(one_line(reason, 300))}" if reason else "")
             + (f" · verdict {escape(look.verdict)}" if look.verdict else "")),
            ("Started", escape(events[0].ts) if events else "?"),
            ("Protocol", escape(started.protocol)),
            ("Participants", " ".join(chip(p, labels) for p in started.participants)),
            ("Judge", chip(started.judge, labels) if started.judge else "none"),
            ("Rounds", str(started.rounds))]
    if started.synthesizer and started.synthesizer != started.judge:
        rows.append(("Synthesizer", chip(started.synthesizer, labels)))
    if started.repo:
        rows.append(("Repository", escape(f"{started.repo} at {(started.snapshot or '?')[:12]}")))
    if started.fence:
        rows.append(("Write fence", escape(started.fence + (f" — {started.fence_reason}"
                                                           if started.fence_reason else ""))))
    return "<dl class=\"meta\">" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) \
        + "</dl>"


def _documents(ended: list, look: Look) -> str:
    """The protocol's documents (from the turns that ended, in the order they ran), the
    deliverable first and marked as such."""
    files, primary = look.documents(ended, "")
    if not files:
        return ""
    names = sorted(files, key=lambda n: (n != primary, n))
    return "<section class=\"documents\"><h2>Outcome</h2>" + "".join(
        f"<article class=\"document{' primary' if n == primary else ''}\" "
        f"data-document=\"{escape(n)}\"><div class=\"doc-name\">{escape(n)}</div>"
        f"{to_html(files[n], 1)}</article>"
        for n in names) + "</section>"


def _anchor(turn_id: str) -> str:
    return "turn-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in turn_id)


def _title(quaestio: str) -> str:
    text = sanitize(quaestio).strip()
    first = text.splitlines()[0].lstrip("#>").strip() if text else ""
    return one_line(first, 120) or "(empty)"
