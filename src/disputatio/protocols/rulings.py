"""How a judgment reads: ``respondeo.md`` for the human, the record ``debate.json`` carries, and
the points as a jury's prompt lists them. Rendered from the structure (``judging.Judgment``),
never from the judge's prose, which is shown quoted below it. Pure.

``names`` maps a label the judges saw ("Participant A") to the debater's name, so the human
reads both; every foreign string is flattened (``one_line``) or quoted, never left to open a
section of ours."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from disputatio.protocols.judging import RULINGS, Cast, Evidence, Finding, Judgment, Point
from disputatio.text import one_line, quote, sanitize

# --- respondeo.md ---------------------------------------------------------------------------


def markdown(j: Judgment, title: str, names: Mapping[str, str] | None = None,
             legacy_text: str = "") -> str:
    if j.legacy:
        return (f"# {title}\n\n_A ruling from before structured findings: its status "
                f"({j.status}) is read from its first line._\n\n{sanitize(legacy_text).strip()}\n")
    provisional = " (provisional)" if j.new_ground else ""
    lines = [f"# {title}", "", f"**Verdict{provisional}: {j.status}** — {_headline(j)}", ""]
    if len(j.seats) > 1:
        lines += [f"**Jury:** {_jury_line(j)}", ""]
    if j.error:
        lines += [f"The answer could not be read as findings, asked twice: {one_line(j.error)}. "
                  "Nothing is resolved: read it below, then answer with "
                  "`disputatio continue \"...\"` to ask again.", ""]
    if j.new_ground:
        lines += ["The judge finds that the human's answers open ground the debaters never "
                  "argued: they argue it in a new round, then the judge rules again (these "
                  "findings are provisional).", ""]
    if j.questions:
        lines += ["## Questions for the human", ""]
        lines += [f"{i}. {one_line(q, 1000)}" for i, q in enumerate(j.questions, start=1)]
        lines.append("")
    if j.points:
        lines += ["## Findings", ""]
        for p in j.points:
            lines += _point(p, names or {}, j.seats[0].juror if len(j.seats) > 1 else None)
    if j.agreements:
        lines += ["## Agreements", ""] + [f"- {one_line(a, 1000)}" for a in j.agreements] + [""]
    if j.summary.strip():
        lines += ["## Summary", "", quote(j.summary.strip()), ""]
    if j.prose.strip():
        lines += ["## The judge's answer", "", quote(j.prose.strip()), ""]
    return "\n".join(lines)


def _headline(j: Judgment) -> str:
    if j.status == "UNCLEAR":
        return "no readable findings"
    counts = {r: sum(1 for p in j.points if p.ruling == r) for r in
              (*RULINGS, "tied", "split")}
    points = ", ".join(f"{n} {r}" for r, n in counts.items() if n)
    blocking = (f"blocking findings: {', '.join(j.blocking)}" if j.blocking
                else "no blocking findings")
    open_ = [p.finding.id for p in j.points if p.severity == "blocking" and not p.decided]
    if open_:
        blocking += f" · blocking, undecided: {', '.join(open_)}"
    return f"{blocking} · {len(j.points)} points" + (f": {points}" if points else "")


def _jury_line(j: Judgment) -> str:
    ruled = j.ruled
    out = f"{len(ruled)} of {len(j.seats)} judges ruled ({', '.join(map(one_line, ruled))})"
    missing = [f"{one_line(s.juror)} {s.failure}" for s in j.seats if s.answer is None]
    return out + (f"; {'; '.join(missing)}" if missing else "")


def _point(p: Point, names: Mapping[str, str], clerk: str | None) -> list[str]:
    """One point; ``clerk``: with a jury, the judge who fixed the points (its reasons shown)."""
    jury = clerk is not None
    f = p.finding
    lines = [f"### {one_line(f.id, 40)} · {p.ruling} · {p.severity} — {one_line(f.point, 200)}",
             ""]
    if f.raised_by:
        lines.append(f"- **Raised by:** {', '.join(_who(r, names) for r in f.raised_by)}")
    if f.file:
        lines.append(f"- **Where:** {_code(_place(f.file, f.line))}")
    if jury:
        lines.append(f"- **Votes:** {_votes(p)}")
    if f.evidence:
        lines.append("- **Evidence:**")
        lines += [f"  - {_evidence(e)}" for e in f.evidence]
    lines.append("")
    if f.reasons.strip():
        lines += [f"Reasons ({one_line(clerk)}):" if clerk else "Reasons:", "",
                  quote(f.reasons.strip()), ""]
    for c in p.dissent:
        lines += [f"Dissent — {one_line(c.juror)} ({c.ruling}):", "",
                  quote(c.reasons.strip() or "(no reasons given)"), ""]
    if not p.decided and jury:
        lines += [f"Not decided by the jury ({p.ruling}); each judge's reasons:", ""]
        lines += [f"- {one_line(c.juror)} ({c.ruling}): {one_line(c.reasons, 500)}"
                  for c in p.votes]
        lines.append("")
    return lines


def _votes(p: Point) -> str:
    groups: dict[str, list[Cast]] = {}
    for c in p.votes:
        groups.setdefault(c.ruling, []).append(c)
    parts = [f"{r} {sum(c.weight for c in cs):g} ({', '.join(one_line(c.juror) for c in cs)})"
             for r, cs in sorted(groups.items(), key=lambda kv: RULINGS.index(kv[0]))]
    text = " · ".join(parts) or "none"
    if p.abstained:
        text += f" · did not rule: {', '.join(map(one_line, p.abstained))}"
    return text + f" · margin {p.margin:g}"


def _evidence(e: Evidence) -> str:
    parts = []
    if e.file:
        parts.append(_code(_place(e.file, e.line)))
    if e.command:
        parts.append(_code(e.command) + (f" → {_code(e.output)}" if e.output else ""))
    if e.note:
        parts.append(one_line(e.note, 500))
    return " · ".join(parts)


def _place(file: str, line: int | None) -> str:
    return f"{file}:{line}" if line else file


def _code(text: str) -> str:
    """A code span nothing in ``text`` can end."""
    return f"`{one_line(text, 300).replace('`', chr(39))}`"


def _who(label: str, names: Mapping[str, str]) -> str:
    name = names.get(label)
    return one_line(label, 80) + (f" ({one_line(name, 80)})" if name else "")


# --- debate.json ----------------------------------------------------------------------------


def _clean(value: Any) -> Any:
    """Every string in ``value`` without control sequences (JSON escapes C0, not C1)."""
    if isinstance(value, str):
        return sanitize(value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def record(j: Judgment) -> dict[str, Any]:
    """What ``debate.json`` says of a judgment besides its findings (docs/findings.md)."""
    return _clean({
        "status": j.status, "legacy": j.legacy, "blocking": bool(j.blocking),
        "blocking_ids": j.blocking, "undecided_ids": j.undecided,
        "questions": [sanitize(q) for q in j.questions],
        "agreements": [sanitize(a) for a in j.agreements], "summary": sanitize(j.summary),
        "new_ground": j.new_ground, "error": j.error,
        "judges": {"seated": len(j.seats), "ruled": len(j.ruled),
                   "seats": [{"name": s.juror, "weight": s.weight, "ruled": s.juror in j.ruled,
                              "failure": s.failure} for s in j.seats]},
    })


def findings(j: Judgment, names: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Each point as CI reads it: a stable id and fingerprint, file and line, the ruling the
    votes made, and every vote."""
    names = names or {}
    return _clean([{
        "id": p.finding.id, "fingerprint": p.fingerprint, "point": sanitize(p.finding.point),
        "ruling": p.ruling, "severity": p.severity,
        "raised_by": [{"label": r, "name": names.get(r)} for r in p.finding.raised_by],
        "file": p.finding.file, "line": p.finding.line,
        "reasons": sanitize(p.finding.reasons),
        "evidence": [e.model_dump(exclude_none=True) for e in p.finding.evidence],
        "votes": [{"judge": c.juror, "weight": c.weight, "ruling": c.ruling,
                   "severity": c.severity, "reasons": sanitize(c.reasons)} for c in p.votes],
        "margin": p.margin, "dissent": [c.juror for c in p.dissent],
        "abstained": p.abstained,
    } for p in j.points])


# --- prompts -------------------------------------------------------------------------------


def anonymous(j: Judgment) -> Judgment:
    """The judgment with its judges called "Judge 1", "Judge 2", ... in seat order: a prompt
    names no one (a juror's name may name its CLI)."""
    alias = {s.juror: f"Judge {i}" for i, s in enumerate(j.seats, start=1)}

    def cast(c: Cast) -> Cast:
        return replace(c, juror=alias.get(c.juror, "a judge"))

    points = [replace(p, votes=[cast(c) for c in p.votes], dissent=[cast(c) for c in p.dissent],
                      abstained=[alias.get(a, "a judge") for a in p.abstained])
              for p in j.points]
    return replace(j, points=points, seats=[replace(s, juror=alias[s.juror]) for s in j.seats])


def points(found: list[Finding]) -> str:
    """The points a jury rules on, as its prompt lists them: what each is and who raised it,
    not how the judge who fixed them ruled (each juror rules on its own). A JSON list, quoted
    so that no point can open a section of the prompt."""
    if not found:
        return "(no contested points: rule on the status only, with an empty findings list)"
    items = [{"id": f.id, "point": f.point, "raised_by": f.raised_by,
              **({"file": f.file} if f.file else {}), **({"line": f.line} if f.line else {})}
             for f in found]
    return quote(json.dumps(items, indent=2, ensure_ascii=False))
