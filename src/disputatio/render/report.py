"""The debate folder's files, rendered from ledger events: debate.md and debate.json, which
every protocol shares, and the protocol's own documents (for disputatio respondeo*.md and
final-report.md). Pure: returns names and contents; the caller writes them.

What differs between protocols — a turn's title and place, lines shown between turns, its
documents and which of them is the deliverable — comes in as a ``Look``, which the protocol
provides (``protocols.base.Presentation`` fits it); the renderers never name a phase."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Protocol

from disputatio.events import AnswersGiven, DebateStarted, TurnEnded, started_event, typed
from disputatio.render import summary
from disputatio.text import one_line, quote, sanitize


class Look(Protocol):
    """What the renderers need of a protocol (see the module's docstring)."""

    @property
    def verdict(self) -> str | None: ...
    @property
    def title(self) -> Callable[[Any], str]: ...
    @property
    def order(self) -> Callable[[Any, list[str]], tuple]: ...
    @property
    def interlude(self) -> Callable[[Any], list[str]]: ...
    @property
    def where(self) -> Callable[[Any], str]: ...
    @property
    def documents(self) -> Callable[[list[Any], str], tuple[dict[str, str], str | None]]: ...
    @property
    def coda(self) -> Callable[[], list[str]]: ...
    @property
    def folded(self) -> Callable[[Any], list[str] | None]: ...
    @property
    def extra(self) -> dict[str, Any]: ...
    @property
    def facts(self) -> dict[str, str | None]: ...


@dataclass
class Artifacts:
    files: dict[str, str]     # file name -> content
    primary: str              # the file name stdout should print


@dataclass(frozen=True)
class _Debate:
    """What the views need besides the turns, read from the ledger's events."""

    started: DebateStarted
    answers: list[str]

    @classmethod
    def from_events(cls, events) -> _Debate:
        return cls(started_event(events) or DebateStarted(quaestio="", rounds=0, participants=[]),
                   [e.answers for _, e in typed(events) if isinstance(e, AnswersGiven)])


def render_all(events, status: str, reason: str, look: Look) -> Artifacts:
    """Every file of the debate folder; the primary is the protocol's deliverable, else
    debate.md."""
    debate = _Debate.from_events(events)
    ended: list[TurnEnded] = [v.turn for v in summary.turns(events)
                              if v.ok is not None]   # in the order they ran
    participants = debate.started.participants
    views = sorted(summary.turns(events), key=lambda v: look.order(v.turn, participants))
    files = {"debate.md": debate_md(debate, views, status, reason, events, look)}
    documents, primary = look.documents(ended, report_header(debate, views, events, look))
    files.update(documents)
    files["debate.json"] = json.dumps(debate_json(debate, views, status, reason, events,
                                                  look), indent=2,
                                      ensure_ascii=False) + "\n"
    return Artifacts(files, primary or "debate.md")


def report_header(debate: _Debate, views, events, look: Look) -> str:
    """Two lines above the deliverable: what it answers and how much to trust it."""
    when = events[0].ts[:10] if events else ""
    st = debate.started
    judged = st.judge and look.facts.get("Judge", st.judge) is not None
    parts = [f"disputatio · {when}", f"{len(st.participants)} participants",
             f"judge {st.judge}" if judged else "no judge"]
    repo = st.repo
    if repo:
        snap = (st.snapshot or "")[:10]
        name = PurePath(repo).name
        parts.append(f"repo {name}@{snap}" if snap else f"repo {name}")
    degraded = summary.degradations(views, look.where)
    lines = [f"> {_title(st.quaestio)}", f"> {' · '.join(parts)}"]
    if degraded:
        lines.append("> **Degraded:** " + " · ".join(degraded))
    return "\n>\n".join(lines) + "\n\n"


def debate_md(debate: _Debate, views, status: str, reason: str, events, look: Look) -> str:
    t = summary.totals(views)
    st = debate.started
    lines = [f"# Debate: {_title(st.quaestio)}", ""]
    running = status == "running"
    degraded = summary.degradations(views, look.where, running)
    if degraded:
        lines += ["> **Degraded debate.** " + " · ".join(degraded), ""]
    unbacked = summary.evidence_warning(t, bool(st.repo))
    if unbacked:
        lines += [f"> **Unverified.** {unbacked[0].upper()}{unbacked[1:]}.", ""]
    facts = {"Judge": (f"{st.judge}" + (f" · **Synthesizer:** {st.synthesizer}"
                                        if st.synthesizer != st.judge else ""))
             if st.judge else "none (the debate ran without a judge)",
             "Rounds": f"{st.rounds}"}
    for key, value in look.facts.items():
        facts[key] = value if value is not None else \
            "none (the lineup's judge takes no part in this protocol)"
    lines += [f"- **Status:** {status}" + (f" — {reason}" if reason else ""),
              f"- **Started:** {events[0].ts if events else '?'}",
              f"- **Participants:** {_named(st)}"]
    lines += [f"- **{key}:** {value}" for key, value in facts.items()]
    if st.repo:
        lines.append(f"- **Repository:** {st.repo} at {(st.snapshot or '?')[:12]}"
                     + (" plus uncommitted changes" if st.include_uncommitted else ""))
    if st.budget_usd is not None:
        lines.append(f"- **Budget (judge, synthesizer):** ${st.budget_usd:.2f}")
    if st.fence:  # debates from before the write fence do not say
        lines.append(f"- **Write fence:** {st.fence}"
                     + (f" — {st.fence_reason}" if st.fence_reason else ""))
    lines += ["", "## Quaestio", "", quote(st.quaestio.strip()), ""]
    for view in views:
        v = view.turn
        lines += look.interlude(v)
        folded = look.folded(v)
        if folded is not None:   # the protocol's own lines stand for it (a round's passes)
            lines += folded
            continue
        title = look.title(v)
        meta = [v.adapter]
        if v.duration_s is not None:
            meta.append(summary.fmt_duration(v.duration_s))
        meta.append("cost unknown" if v.cost_usd is None else f"${v.cost_usd:.2f}")
        meta.append(summary.fmt_tokens(v.tokens))
        if v.session_id:
            meta.append(f"session {_session(v.session_id)}")
        lines += [f"## {title} — {one_line(v.participant, 100)}", "", f"_{' · '.join(meta)}_", ""]
        if earlier := summary.earlier_attempts(view):
            lines += [f"_{earlier}._", ""]
        if view.ok:
            lines += [quote(v.text.strip()), ""]
        elif view.ok is False:
            lines += [f"**Failed ({v.failure}):** {one_line(v.message or '', 500)}", ""]
        elif running:
            lines += ["_Working… (the debate is running)_", ""]
        else:
            lines += ["**Did not finish** (the debate was interrupted during this turn).", ""]
    lines += look.coda()
    wall = summary.fmt_duration(summary.wall_seconds(events))
    lines += ["## Totals", "",
              f"{len(st.participants)} participants · {t.turns} turns "
              f"({t.failed} failed) · wall time {wall} · "
              f"agent time {summary.fmt_duration(t.agent_s)} · "
              f"{summary.fmt_cost(t)} · {summary.fmt_tokens(t.tokens, t.tokens_complete)} · "
              f"{summary.evidence_line(t)}", ""]
    return "\n".join(lines)


# where a debate stands before it has an ending
_UNDER_WAY = ("running", "interrupted", "unfinished")


def debate_json(debate: _Debate, views, status: str, reason: str, events,
                look: Look) -> dict:
    """The debate for machines. ``ending`` is the protocol's own word for why it ended (a
    committee's ``all-passed`` even when a judge then ruled ``resolved``), else the status;
    ``rounds`` is what was set (a committee's cap), ``rounds_held`` what was held."""
    t = summary.totals(views)
    started = debate.started
    own = dict(look.extra)
    ending = own.pop("ending", None) or (None if status in _UNDER_WAY else status)
    held = own.pop("rounds_held", None)
    return {
        "status": status,
        "reason": reason or None,
        "protocol": started.protocol,
        "ending": ending,
        "verdict": look.verdict,
        **own,
        "quaestio": sanitize(started.quaestio),
        "rounds": started.rounds,
        "rounds_held": held,
        "participants": [{"name": n, **started.lineup.get(n, {}),
                          **({"label": started.labels[n]} if started.labels and n in started.labels
                             else {})}
                         for n in started.participants],
        "judge": started.judge,
        "synthesizer": started.synthesizer,
        "answers": [sanitize(a) for a in debate.answers],
        # "bwrap 0.8.0", or "none" with the reason; null for a debate from before the fence
        "fence": started.fence,
        "fence_reason": started.fence_reason,
        "degraded": summary.degradations(views, look.where),
        "warnings": [w for w in [summary.evidence_warning(t, bool(started.repo))] if w],
        "turns": [{
            "turn_id": v.turn_id, "role": v.role, "seat": v.seat, "phase": v.phase,
            "round": v.round, "adapter": v.adapter, "ok": view.ok, "failure": v.failure,
            "message": one_line(v.message) if v.message else None,
            "duration_s": v.duration_s, "cost_usd": v.cost_usd,
            "tokens": v.tokens or None, "evidence": v.evidence or None,
            "session_id": v.session_id, "cli_version": v.cli_version,
        } for view in views for v in [view.turn]],
        "totals": {
            "turns": t.turns, "failed": t.failed, "agent_s": round(t.agent_s, 3),
            "wall_s": round(summary.wall_seconds(events), 3),
            "cost_usd": t.cost_usd, "cost_complete": t.cost_complete,
            # the sum of the known figures: a lower bound when tokens_complete is false
            "tokens": t.tokens or None, "tokens_complete": t.tokens_complete,
            "turns_with_commands": t.commands_turns, "turns_observed": t.observed_turns,
        },
        # the head of the hash chain: a ledger cut short after this was written shows here
        "ledger": {"events": len(events),
                   "head": getattr(events[-1], "hash", None) if events else None},
    }


def _named(st: DebateStarted) -> str:
    """The debaters, each with the label agents knew it by (when the ledger records labels)."""
    known = st.labels or {}
    return ", ".join(f"{n} ({known[n]})" if n in known else n for n in st.participants)


def _session(session_id: str) -> str:
    """A CLI's session id as a code span: nothing in it can end the span or the line."""
    return f"`{one_line(session_id, 100).replace('`', '')}`"


def _title(quaestio: str) -> str:
    text = sanitize(quaestio).strip()
    first = text.splitlines()[0].lstrip("#>").strip() if text else "(empty)"
    return one_line(first, 80) or "(empty)"
