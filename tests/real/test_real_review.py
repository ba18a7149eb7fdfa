"""disputatio review with real CLIs against the scripted model server, as a CI job runs it.

Why: the review is proven with fake CLIs elsewhere; only real ones show that the diff reaches
a real CLI's prompt, that each works in its checkout of the head, and that a real judge's
findings block becomes verdict.json and a SARIF result at its file and line. The scripted
judge upholds one major finding at calc.py:1: it fails the review with --fail-on major and
passes it at the default (blocking).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import git
from support.real_tier import WIRE, calc_repo

from .clis import clean_env, write_lineup

CHANGE = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


@pytest.fixture
def calc(tmp_path) -> Path:
    repo = calc_repo(tmp_path)
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "calc.py").write_text(CHANGE)
    git(repo, "commit", "-qam", "sub")
    return repo


def review(tmp_path: Path, repo: Path, config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "disputatio", "review", "--base", "main",
                           "--repo", str(repo), "--config", str(config), "--format", "json",
                           "-q", *args], cwd=repo, env=clean_env(tmp_path / "user-home"),
                          capture_output=True, text=True, timeout=300)


def test_a_review_by_real_clis_gates_on_the_judges_findings(real_clis, model_server, calc,
                                                             tmp_path):
    config = write_lineup(tmp_path / "review.yaml", real_clis, model_server.url,
                          tmp_path / "homes", names=("claude", "pi"), rounds=0)
    r = review(tmp_path, calc, config, "--fail-on", "major")
    assert r.returncode == 1, r.stderr[-3000:]
    v = json.loads(r.stdout)
    assert v["verdict"] == "fail" and v["change"]["files"] == ["calc.py"], v
    (f,) = v["findings"]
    assert (f["ruling"], f["severity"], f["file"], f["line"]) == ("upheld", "major",
                                                                  "calc.py", 1)
    assert {a["name"]: a["adapter"] for a in v["agents"]} == {
        "claude": "claude", "pi": "pi", "judge": "claude"}
    assert all(a["cli_version"] for a in v["agents"]), v["agents"]
    sarif = json.loads(Path(v["sarif"]).read_text())
    loc = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert (loc["artifactLocation"]["uri"], loc["region"]["startLine"]) == ("calc.py", 1)
    # the diff reached both real debaters' prompts
    for name in ("claude", "pi"):
        asked = [q for q in model_server.turns if WIRE[name](q) and "def sub(a, b)" in q.prompt]
        assert asked, f"{name} never saw the diff"
    # the same debate's standard: blocking only
    r = review(tmp_path, calc, config)
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout)["verdict"] == "pass"
