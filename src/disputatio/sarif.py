"""``findings.sarif``: a review's findings as SARIF 2.1.0, so code scanning shows them as alerts.

One result per finding the judges did not reject (upheld, or left undecided: open, tied or
split), each with a location: the finding's file and line, else its first evidence with a file,
else the first changed file (said so in the message), because code scanning drops a result it
cannot place. Rejected findings stay in verdict.json only. The fingerprint is the finding's own
(its file and point), so an alert keeps its identity from one review to the next.
"""

from __future__ import annotations

import posixpath
from typing import Any
from urllib.parse import quote

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"blocking": "error", "major": "warning", "minor": "note", "info": "note"}
RULES = {
    "blocking": "A problem the reviewers found that must not be merged as it is.",
    "major": "A serious problem the reviewers found.",
    "minor": "A small problem the reviewers found.",
    "info": "A remark of the reviewers.",
}


def log(v: dict[str, Any], changed: list[str]) -> dict[str, Any]:
    """The SARIF log of verdict ``v``; ``changed``: the change's paths, to place findings."""
    results = [_result(f, changed) for f in v["findings"] if f["ruling"] != "rejected"]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "disputatio", "version": v["tool"]["version"],
                "rules": [{"id": f"disputatio/{s}", "name": f"review-{s}",
                           "shortDescription": {"text": f"A {s} review finding"},
                           "fullDescription": {"text": text},
                           "defaultConfiguration": {"level": LEVEL[s]},
                           "properties": {"tags": ["review"]}}
                          for s, text in RULES.items()],
            }},
            "invocations": [{"executionSuccessful": v["verdict"] != "none",
                             "exitCode": v["exit_code"],
                             **({"toolExecutionNotifications": [{
                                 "level": "error", "message": {"text": v["warning"]}}]}
                                if v.get("warning") else {})}],
            "originalUriBaseIds": {"SRCROOT": {"description": {
                "text": "The root of the repository reviewed."}}},
            "results": [r for r in results if r is not None],
            "properties": {"verdict": v["verdict"], "debate": v["debate"],
                           "ledger_head": v["ledger"].get("head")},
        }],
    }


def _result(f: dict[str, Any], changed: list[str]) -> dict[str, Any] | None:
    file, line, guessed = _place(f, changed)
    if file is None:
        return None
    text = f"{f['id']} ({f['ruling']}, {f['severity']}): {f['point']}"
    if f.get("reasons"):
        text += f"\n\n{f['reasons']}"
    if guessed:
        text += "\n\n(The reviewers named no place for this finding: shown on a changed file.)"
    severity = f["severity"] if f["severity"] in LEVEL else "info"
    return {
        "ruleId": f"disputatio/{severity}",
        "level": LEVEL[severity] if f["ruling"] == "upheld" else "note",
        "message": {"text": text},
        "locations": [{"physicalLocation": {
            # a URI reference: a space, a newline or an accent in a path is percent-encoded
            "artifactLocation": {"uri": quote(file, safe="/"), "uriBaseId": "SRCROOT"},
            "region": {"startLine": line},
        }}],
        "partialFingerprints": {"disputatioFinding/v1": f.get("fingerprint") or f["id"]},
        "properties": {"id": f["id"], "ruling": f["ruling"], "severity": f["severity"],
                       "raised_by": f["raised_by"]},
    }


def _place(f: dict[str, Any], changed: list[str]) -> tuple[str | None, int, bool]:
    if f.get("file"):
        return relative(f["file"], changed), f.get("line") or 1, False
    for e in f.get("evidence") or []:
        if e.get("file"):
            return relative(e["file"], changed), e.get("line") or 1, False
    return (changed[0], 1, True) if changed else (None, 1, True)


def relative(path: str, changed: list[str]) -> str:
    """A path from the repository's root. An agent may name a file by its path in its own
    checkout (absolute, or ``./x``): the changed file it ends with is meant."""
    p = path.replace("\\", "/")
    for c in sorted(changed, key=len, reverse=True):
        if p == c or p.endswith("/" + c):
            return c
    p = posixpath.normpath(p.lstrip("/")) if p.startswith("/") else posixpath.normpath(p)
    return p.removeprefix("./")
