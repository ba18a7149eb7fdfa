"""findings.sarif from a verdict: every result placed (code scanning drops what it cannot
place), valid against the official SARIF 2.1.0 schema whatever the findings say."""

from __future__ import annotations

import json
import re
from urllib.parse import unquote

import jsonschema
import pytest

from disputatio import sarif
from support import ROOT

SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "sarif-schema-2.1.0.json").read_text())


def finding(id="F1", ruling="upheld", severity="blocking", file=None, line=None, **more):
    return {"id": id, "point": f"point {id}", "ruling": ruling, "severity": severity,
            "file": file, "line": line, "evidence": [], "reasons": "", "raised_by": ["ada"],
            "fingerprint": f"fp-{id}", **more}


def verdict(*findings, verdict="fail", warning=None):
    return {"tool": {"version": "0.1.0"}, "verdict": verdict, "exit_code": 1,
            "warning": warning, "findings": list(findings), "debate": "/d",
            "ledger": {"head": "e" * 64}}


@pytest.mark.parametrize("path,changed,expected", [
    ("src/app.py", ["src/app.py"], "src/app.py"),
    ("./src/app.py", [], "src/app.py"),
    ("/tmp/disputatio-x/ws/ada/src/app.py", ["src/app.py", "app.py"], "src/app.py"),
    ("/etc/passwd", ["src/app.py"], "etc/passwd"),
    ("src/../src/app.py", [], "src/app.py"),
])
def test_a_path_an_agent_gave_is_made_relative_to_the_repository(path, changed, expected):
    assert sarif.relative(path, changed) == expected


def test_every_finding_not_rejected_is_a_placed_result():
    log = sarif.log(verdict(
        finding("F1", file="app.py", line=9),
        finding("F2", severity="minor", evidence=[{"file": "lib.py", "line": 3}]),
        finding("F3", ruling="split", severity="major"),
        finding("F4", ruling="rejected"),
    ), ["app.py", "lib.py"])
    jsonschema.validate(log, SCHEMA)
    results = log["runs"][0]["results"]
    assert [r["properties"]["id"] for r in results] == ["F1", "F2", "F3"]
    where = [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
              r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results]
    assert where == [("app.py", 9), ("lib.py", 3), ("app.py", 1)]
    assert [r["level"] for r in results] == ["error", "note", "note"]
    assert "named no place" in results[2]["message"]["text"]
    assert results[0]["partialFingerprints"] == {"disputatioFinding/v1": "fp-F1"}


def test_a_path_is_a_uri_reference_whatever_its_characters():
    """SARIF locations are URI references: a path with a space, a newline, an accent or a
    percent sign is percent-encoded, and decodes back to the path."""
    odd = ["src/späce ü.py", "line\nbreak.py", "100%#done?.py"]
    log = sarif.log(verdict(*(finding(f"F{i}", file=p, line=2) for i, p in enumerate(odd))),
                    odd)
    jsonschema.validate(log, SCHEMA)
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]]
    assert uris[0] == "src/sp%C3%A4ce%20%C3%BC.py"
    assert all(re.fullmatch(r"[A-Za-z0-9/._~%-]+", u) for u in uris), uris
    assert [unquote(u) for u in uris] == odd


def test_no_verdict_is_an_unsuccessful_run_with_the_warning():
    log = sarif.log(verdict(verdict="none", warning="NO VERDICT — passed only because"), [])
    jsonschema.validate(log, SCHEMA)
    inv = log["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert inv["toolExecutionNotifications"][0]["message"]["text"].startswith("NO VERDICT")
