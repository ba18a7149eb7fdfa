"""A committee's judge rules in findings like the disputatio protocol's, and debate.json carries
them the same way, so what reads findings (the review job's verdict.json and SARIF) reads a
committee's too."""

from __future__ import annotations

import json

from support import invoke, one_path, sim, write_config


def test_a_committee_ruling_puts_its_findings_in_debate_json(home, tmp_path):
    judge = sim("judge", DISPUTATIO_SIM_RULING="upheld", DISPUTATIO_SIM_SEVERITY="blocking")
    cfg = write_config(tmp_path / "c.yaml", [sim("ada"), sim("bob")], judge=judge)
    ran = invoke("run", "--protocol", "committee", "--config", str(cfg), "-q", "Tabs?",
                 cwd=home)
    assert ran.returncode == 0, ran.stderr
    data = json.loads((one_path(ran.stdout).parent / "debate.json").read_text())
    assert data["judgment"]["judges"]["ruled"] == 1
    assert data["findings"], "the judge's points are missing from debate.json"
    assert {f["ruling"] for f in data["findings"]} == {"upheld"}
    assert "blocking" in {f["severity"] for f in data["findings"]}
    assert data["judgment"]["blocking"] is True
    assert all(f["id"] and f["raised_by"] for f in data["findings"])


def test_a_committee_without_a_judge_has_no_findings(home, tmp_path):
    cfg = write_config(tmp_path / "c.yaml", [sim("ada"), sim("bob")], judge=False)
    ran = invoke("run", "--protocol", "committee", "--config", str(cfg), "-q", "Tabs?",
                 cwd=home)
    assert ran.returncode == 0, ran.stderr
    data = json.loads((one_path(ran.stdout).parent / "debate.json").read_text())
    assert "findings" not in data and "judgment" not in data
