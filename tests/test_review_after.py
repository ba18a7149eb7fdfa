"""A review's debate after the review: ``resume`` of one that stopped ends as the review would
have (the same head, verdict.json, findings.sarif, the review's exit code), and ``redact`` takes
a turn's words out of verdict.json and findings.sarif too, leaving both valid and the verdict
standing."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from support import git, invoke, sim, write, write_config
from support.reviewing import (
    CHANGED,
    SARIF_SCHEMA,
    VERDICT_SCHEMA,
    lineup,
    outputs,
    review,
    review_repo,
)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    return review_repo(tmp_path, monkeypatch)


def test_a_resumed_review_reviews_the_head_it_started_on_and_ends_as_a_review(repo):
    cfg = yaml.safe_load(lineup(repo.parent / "lineup.yaml", "blocking").read_text())
    cfg["participants"][1]["env"]["REVIEW_FAIL_ONCE"] = str(repo.parent / "bob-failed")
    (repo.parent / "lineup.yaml").write_text(yaml.safe_dump(cfg))
    reviewed = git(repo, "rev-parse", "HEAD")
    r = review(repo, "--base", "main", "--format", "json")
    assert r.returncode == 3, r.stderr            # bob could not answer: no verdict
    debate = Path(json.loads(r.stdout)["debate"])
    # the branch moves on before the review is resumed
    write(repo, {"app.py": CHANGED.replace("a / b", "a / b if b else 0")})
    git(repo, "commit", "-qam", "guard")
    r = invoke("resume", "--debate", str(debate), "-q", cwd=repo)
    assert r.returncode == 1, r.stderr            # the blocking finding fails it, as a review
    assert Path(r.stdout.strip()) == debate / "verdict.json"
    assert "has moved" not in r.stderr
    v, s = outputs(r.stdout)
    assert v["verdict"] == "fail" and v["change"]["head"] == reviewed
    [result] = s["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    # bob, run again, read the head under review, not the commit made since
    md = (debate / "debate.md").read_text()
    read = [x for x in md.splitlines() if "I read app.py:" in x]
    assert len(read) == 2 and all("def ratio(a, b)" in x for x in read)
    assert not any("if b else 0" in x for x in read)
    # a debate that has ended: resume says so, and still exits as the review decided
    r = invoke("resume", "--debate", str(debate), "-q", cwd=repo)
    assert r.returncode == 1 and Path(r.stdout.strip()) == debate / "verdict.json"


def test_a_resumed_review_keeps_its_fail_open(repo):
    lineup(repo.parent / "lineup.yaml", "clean")
    cfg = yaml.safe_load((repo.parent / "lineup.yaml").read_text())
    cfg["judge"]["env"]["REVIEW_RULING"] = "ask"     # a judge that needs a human: no verdict
    cfg["participants"][1]["env"]["REVIEW_FAIL_ONCE"] = str(repo.parent / "bob-failed")
    (repo.parent / "lineup.yaml").write_text(yaml.safe_dump(cfg))
    r = review(repo, "--base", "main", "--fail-open", "--format", "json")
    assert r.returncode == 0 and "NO VERDICT" in r.stderr
    debate = Path(json.loads(r.stdout)["debate"])
    r = invoke("resume", "--debate", str(debate), "-q", cwd=repo)
    assert r.returncode == 0 and "NO VERDICT" in r.stderr, r.stderr
    v, _ = outputs(r.stdout)
    assert v["verdict"] == "none" and v["fail_open"] and v["warning"].startswith("NO VERDICT")
    assert "Is an empty list possible here?" in v["reason"]


def test_a_debate_that_is_no_review_resumes_as_before(tmp_path):
    cfg = write_config(tmp_path / "lineup.yaml", [sim("advocate"), sim("skeptic")],
                       rounds=0)
    r = invoke("run", "--config", str(cfg), "-q", "Is it worth it?", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    debate = Path(r.stdout.strip()).parent
    r = invoke("resume", "--debate", str(debate), "-q", cwd=tmp_path)
    assert r.returncode == 0 and "nothing to resume" in r.stderr
    assert not (debate / "verdict.json").exists()


def valid(debate: Path) -> tuple[dict, dict]:
    v = json.loads((debate / "verdict.json").read_text())
    s = json.loads((debate / "findings.sarif").read_text())
    jsonschema.validate(v, VERDICT_SCHEMA)
    jsonschema.validate(s, SARIF_SCHEMA)
    return v, s


def test_redacting_the_judges_turn_keeps_the_verdict_and_drops_its_words(repo):
    # the simulated judge writes its findings as an indented JSON block, line by line
    (repo.parent / "lineup.yaml").write_text(yaml.safe_dump({"rounds": 0, "judge": {
        "adapter": "simulated", "name": "judge", "env": {"DISPUTATIO_SIM_SEVERITY": "blocking"}},
        "participants": [{"adapter": "simulated", "name": n, "model": m}
                         for n, m in (("ada", "advocate"), ("bob", "skeptic"))]}))
    r = review(repo, "--base", "main")
    assert r.returncode == 1, r.stderr
    debate = Path(r.stdout.strip()).parent
    point = "A change of this size needs a measurement before it is made."
    assert point in (debate / "findings.sarif").read_text()
    r = invoke("redact", str(debate), "respondeo-1", "--reason", 'it quoted a "key"', cwd=repo)
    assert r.returncode == 0, r.stderr
    v, s = valid(debate)
    assert v["verdict"] == "fail" and v["exit_code"] == 1 and v["counts"]["blocking"] == 1
    for name in ("verdict.json", "findings.sarif"):
        text = (debate / name).read_text()
        assert point not in text and "none gathered any" not in text, name
    assert v["findings"][0]["point"] == '[REDACTED: it quoted a "key"]'
    [result] = s["runs"][0]["results"]
    assert result["level"] == "error" and "[REDACTED" in result["message"]["text"]


def test_redacting_a_debaters_turn_drops_what_the_evidence_quoted_of_it(repo):
    secret = "TOKEN=sk-live-4f9a8b7c6d5e4f3a"
    write(repo, {"secret.env": secret + "\n"})
    git(repo, "add", "secret.env")
    git(repo, "commit", "-qm", "config")
    cfg = yaml.safe_load(lineup(repo.parent / "lineup.yaml", "blocking",
                                REVIEW_EVIDENCE=secret).read_text())
    cfg["participants"][0]["env"]["REVIEW_READ"] = "secret.env"
    (repo.parent / "lineup.yaml").write_text(yaml.safe_dump(cfg))
    r = review(repo, "--base", "main")
    assert r.returncode == 1, r.stderr
    debate = Path(r.stdout.strip()).parent
    assert secret in (debate / "verdict.json").read_text()
    r = invoke("redact", str(debate), "proposal/ada", "--reason", "a live token", cwd=repo)
    assert r.returncode == 0, r.stderr
    v, _ = valid(debate)
    assert secret not in (debate / "verdict.json").read_text()
    assert v["findings"][0]["evidence"][0]["output"] == "[REDACTED: a live token]"
    assert v["findings"][0]["point"].startswith("The change divides by zero")


def test_a_review_whose_judge_asked_a_human_ends_as_a_review_once_answered(repo):
    (repo.parent / "lineup.yaml").write_text(yaml.safe_dump({"rounds": 0, "judge": {
        "adapter": "simulated", "name": "judge", "env": {
            "DISPUTATIO_SIM_STATUS": "needs_input", "DISPUTATIO_SIM_SEVERITY": "major"}},
        "participants": [sim("advocate"), sim("skeptic")]}))
    r = review(repo, "--base", "main", "--format", "json")
    assert r.returncode == 3, r.stderr
    v = json.loads(r.stdout)
    assert v["verdict"] == "none" and "could not decide without a human" in v["reason"]
    r = invoke("continue", "Speed matters; no deadline.", "--debate", v["debate"], "-q",
               cwd=repo)
    assert r.returncode == 0, r.stderr
    v, s = outputs(r.stdout)                       # verdict.json, written again
    assert v["verdict"] == "pass" and v["counts"]["upheld"] == 1
    assert s["runs"][0]["results"][0]["level"] == "warning"   # the major finding, upheld
