"""``verdict.json``: what a review decided, for machines (``schemas/verdict-1.schema.json``).

Built from the debate's own ``debate.json`` (the judgment computed in code from the judge's
structured findings, never from a sentence), so the verdict and the record cannot disagree.
The exit code follows from it: 0 no finding fails the review, 1 at least one upheld finding at
or above ``--fail-on``, 3 no verdict could be reached (fail closed; ``--fail-open`` makes that 0
and says so loudly in every output).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from disputatio import __version__, sarif
from disputatio.protocols.judging import SEVERITIES

SCHEMA = "disputatio-verdict-1"   # schemas/verdict-1.schema.json
SCHEMA_VERSION = 1
EXIT_PASS, EXIT_FAIL, EXIT_NO_VERDICT = 0, 1, 3
VERDICT_FILE, SARIF_FILE = "verdict.json", "findings.sarif"

__all__ = ["EXIT_FAIL", "EXIT_NO_VERDICT", "EXIT_PASS", "FILES", "SEVERITIES", "build",
           "decide", "redact", "summary_line", "write"]
FILES = (VERDICT_FILE, SARIF_FILE)


def build(debate_dir: Path, change: dict[str, Any], fail_on: str = "blocking",
          fail_open: bool = False, protocol: str = "disputatio") -> dict[str, Any]:
    """The verdict of the review whose debate is ``debate_dir``."""
    record = json.loads((debate_dir / "debate.json").read_text(encoding="utf-8"))
    findings = [_finding(f) for f in record.get("findings") or []]
    outcome, code, reason = decide(record, findings, fail_on)
    warning = None
    if code == EXIT_NO_VERDICT and fail_open:
        warning = (f"NO VERDICT — passed only because of --fail-open: {reason}. Nothing was "
                   "reviewed to a conclusion; read the debate before merging.")
        code = EXIT_PASS
    totals = record.get("totals") or {}
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "disputatio", "version": __version__},
        "verdict": outcome,
        "exit_code": code,
        "reason": reason,
        "warning": warning,
        "fail_on": fail_on,
        "fail_open": fail_open,
        "counts": _counts(findings, fail_on),
        "status": record.get("status"),
        "protocol": protocol,
        "change": change,
        "findings": findings,
        "agents": _agents(record.get("turns") or []),
        "cost_usd": totals.get("cost_usd"),
        "cost_complete": bool(totals.get("cost_complete")),
        "tokens": totals.get("tokens"),
        "degraded": record.get("degraded") or [],
        "ledger": record.get("ledger") or {"events": 0, "head": None},
        "debate": str(debate_dir),
        "report": _report(debate_dir),
        "sarif": str(debate_dir / SARIF_FILE),
    }


def decide(record: dict[str, Any], findings: list[dict[str, Any]],
           fail_on: str) -> tuple[str, int, str]:
    """``pass``/``fail``/``none``, its exit code and why. A finding upheld at or above
    ``fail_on`` fails the review even when the judge left other matters open; otherwise only a
    resolved judgment is a verdict."""
    failing = [f for f in findings if _fails(f, fail_on)]
    if failing:
        ids = ", ".join(f["id"] for f in failing)
        return "fail", EXIT_FAIL, f"upheld at or above {fail_on}: {ids}"
    judgment = record.get("judgment")
    if judgment is None:
        why = record.get("reason") or f"the debate ended {record.get('status')}"
        if record.get("status") in ("resolved", "debated") or not record.get("reason"):
            why = (f"the debate ended {record.get('status')} without a judgment in findings "
                   "(a lineup without a judge, or a protocol whose judge gives none)")
        return "none", EXIT_NO_VERDICT, why
    status = judgment.get("status")
    if status == "RESOLVED":
        upheld = sum(1 for f in findings if f["ruling"] == "upheld")
        return "pass", EXIT_PASS, f"no upheld finding at or above {fail_on} ({upheld} upheld " \
            f"below it, {len(findings)} in all)"
    if status == "NEEDS_INPUT":
        asked = "; ".join(judgment.get("questions") or []) or "(no questions listed)"
        return "none", EXIT_NO_VERDICT, f"the judge could not decide without a human: {asked}"
    return "none", EXIT_NO_VERDICT, (f"the judge's answer could not be read as findings: "
                                     f"{judgment.get('error') or status}")


def _fails(f: dict[str, Any], fail_on: str) -> bool:
    return f["ruling"] == "upheld" and f["severity"] in SEVERITIES and \
        SEVERITIES.index(f["severity"]) <= SEVERITIES.index(fail_on)


def _finding(f: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f["id"], "fingerprint": f.get("fingerprint"), "point": f.get("point", ""),
        "ruling": f.get("ruling"), "severity": f.get("severity"),
        "file": f.get("file"), "line": f.get("line"),
        "evidence": f.get("evidence") or [], "reasons": f.get("reasons", ""),
        "raised_by": [r.get("name") or r.get("label") for r in f.get("raised_by") or []],
    }


def _counts(findings: list[dict[str, Any]], fail_on: str) -> dict[str, int]:
    upheld = [f for f in findings if f["ruling"] == "upheld"]
    return {"findings": len(findings), "upheld": len(upheld),
            "blocking": sum(1 for f in upheld if f["severity"] == "blocking"),
            "failing": sum(1 for f in findings if _fails(f, fail_on)),
            "rejected": sum(1 for f in findings if f["ruling"] == "rejected"),
            "undecided": sum(1 for f in findings if f["ruling"] not in ("upheld", "rejected"))}


def _agents(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cost, tokens and CLI version per agent (a name may sit in several seats)."""
    out: dict[str, dict[str, Any]] = {}
    for t in turns:
        a = out.setdefault(t["role"], {"name": t["role"], "seats": [], "adapter": t["adapter"],
                                       "cli_version": None, "turns": 0, "failed": 0,
                                       "cost_usd": 0.0, "cost_complete": True, "tokens": {}})
        if t["seat"] not in a["seats"]:
            a["seats"].append(t["seat"])
        a["turns"] += 1
        a["failed"] += 0 if t["ok"] else 1
        a["cli_version"] = t.get("cli_version") or a["cli_version"]
        if t.get("cost_usd") is None:
            a["cost_complete"] = False
        else:
            a["cost_usd"] = round(a["cost_usd"] + t["cost_usd"], 6)
        for k, n in (t.get("tokens") or {}).items():
            if isinstance(n, int):
                a["tokens"][k] = a["tokens"].get(k, 0) + n
    return list(out.values())


def _report(debate_dir: Path) -> str:
    for name in ("final-report.md", "respondeo.md", "debate.md"):
        if (debate_dir / name).is_file():
            return str(debate_dir / name)
    return str(debate_dir / "debate.md")


def write(debate_dir: Path, v: dict[str, Any], changed: list[str]) -> Path:
    """verdict.json and findings.sarif into the debate folder, each whole or not at all."""
    _atomic(debate_dir / SARIF_FILE, json.dumps(sarif.log(v, changed), indent=2,
                                                ensure_ascii=False))
    path = debate_dir / VERDICT_FILE
    _atomic(path, json.dumps(v, indent=2, ensure_ascii=False))
    return path


# a piece of a redacted turn shorter than this is not looked for: "ok" is everywhere
REDACT_MIN = 16
_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.){' + str(REDACT_MIN) + ',}"')


def redact(debate_dir: Path, texts: list[str], dead: str) -> bool:
    """Take the words of redacted turns (``texts``) out of verdict.json and findings.sarif:
    every text of the verdict that quotes them (a finding's point, reasons and evidence, the
    reason, the warning) loses what it quotes to the tombstone ``dead``, and both files are
    written again as JSON (patching them as text could cut a string in two). The verdict itself
    stands: it is what a CI job acted on. False when the debate has no verdict."""
    path = debate_dir / VERDICT_FILE
    try:
        v = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    pieces = _pieces(texts)

    def clean(value: Any) -> Any:
        if isinstance(value, list):
            return [clean(x) for x in value]
        if not isinstance(value, str):
            return value
        whole = value.strip()
        if len(whole) >= REDACT_MIN and any(
                whole in t or json.dumps(whole)[1:-1] in t for t in texts):
            return dead
        for piece in pieces:
            value = value.replace(piece, dead)
        return value

    for f in v.get("findings") or []:
        for key in ("point", "reasons"):
            f[key] = clean(f.get(key))
        f["evidence"] = [{k: x if k in ("file", "line") else clean(x) for k, x in e.items()}
                         if isinstance(e, dict) else clean(e) for e in f.get("evidence") or []]
    for key in ("reason", "warning"):
        v[key] = clean(v.get(key))
    write(debate_dir, v, (v.get("change") or {}).get("files") or [])
    return True


def _pieces(texts: list[str]) -> list[str]:
    """What of the texts is looked for, longest first: each line long enough to be its own,
    and each JSON string in them (a judge's findings are a JSON block), as it reads."""
    found: set[str] = set()
    for t in texts:
        found.update(line.strip() for line in t.splitlines())
        for literal in _JSON_STRING.findall(t):
            try:
                found.add(json.loads(literal).strip())
            except ValueError:
                continue
    return sorted((p for p in found if len(p) >= REDACT_MIN), key=len, reverse=True)


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    os.replace(tmp, path)


def summary_line(v: dict[str, Any]) -> str:
    c = v["counts"]
    cost = "cost unknown" if v["cost_usd"] is None else \
        f"${v['cost_usd']:.4f}" + ("" if v["cost_complete"] else " (+ unknown)")
    return (f"review: {v['verdict']} — {v['reason']} · {c['findings']} findings, "
            f"{c['blocking']} blocking · {cost}")
