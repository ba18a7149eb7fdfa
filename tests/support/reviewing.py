"""Reviews in the tests: a repository with a base branch and a change, a lineup of fake
reviewing CLIs (tests/fakes/reviewer.py through the command adapter) whose judge rules in
findings, ``disputatio review`` run on them, and its outputs read and checked against
schemas/verdict-1.schema.json and the official SARIF 2.1.0 schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import yaml

from support.cli import ROOT, invoke
from support.git import git, isolate_git, make_repo, write
from support.procs import FAKES

REVIEWER = [sys.executable, str(FAKES / "reviewer.py")]
VERDICT_SCHEMA = json.loads((ROOT / "schemas" / "verdict-1.schema.json").read_text())
SARIF_SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "sarif-schema-2.1.0.json").read_text())

BASE = "def mean(xs):\n    return sum(xs) / len(xs)\n"
CHANGED = BASE + "\n\ndef ratio(a, b):\n    return a / b\n"   # line 5 divides


def review_repo(tmp_path: Path, monkeypatch) -> Path:
    """``main`` with app.py, and ``feature`` checked out: app.py gains a division at line 5."""
    isolate_git(tmp_path, monkeypatch)
    r = make_repo(tmp_path / "repo", {"app.py": BASE, "README.md": "calc\n"})
    git(r, "checkout", "-q", "-b", "feature")
    write(r, {"app.py": CHANGED})
    git(r, "commit", "-qam", "ratio")
    return r


def lineup(path: Path, ruling: str = "clean", judge_timeout: float | None = None,
           **judge_env) -> Path:
    def seat(name: str, **env) -> dict:
        return {"adapter": "command", "name": name, "argv": REVIEWER,
                "env": {k: str(v) for k, v in env.items()}}
    judge = seat("judge", REVIEW_RULING=ruling, REVIEW_FILE="app.py", REVIEW_LINE=5,
                 **judge_env)
    if judge_timeout:
        judge["timeout_minutes"] = judge_timeout
    path.write_text(yaml.safe_dump({
        "rounds": 0, "judge": judge,
        "participants": [seat(n, REVIEW_READ="app.py", REVIEW_EXPECT="+def ratio(a, b):")
                         for n in ("ada", "bob")]}))
    return path


def review(repo: Path, *args: str):
    return invoke("review", "-q", "--config", str(repo.parent / "lineup.yaml"), *args,
                  cwd=repo)


def outputs(stdout: str) -> tuple[dict, dict]:
    path = Path(stdout.strip())
    assert path.name == "verdict.json"
    v = json.loads(path.read_text())
    jsonschema.validate(v, VERDICT_SCHEMA)
    s = json.loads((path.parent / "findings.sarif").read_text())
    jsonschema.validate(s, SARIF_SCHEMA)
    return v, s
