"""The GitHub Action (action.yml) run outside GitHub: its composite steps, read from the file,
executed in order with bash as a runner would (inputs and step outputs through ``${{ }}`` in
env only, GITHUB_OUTPUT files, always() steps), against the suite's fake GitHub API. The
install step is not run: the steps use this checkout's installed disputatio instead (installing
the package from the action's own folder needs a package index)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from disputatio import ci
from support import FAKES, ROOT, git, isolate_git, make_repo, write
from support.fake_github import TOKEN, fake_github

pytestmark = pytest.mark.process   # bash runs each step; disputatio runs as its own process

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
REVIEWER = [sys.executable, str(FAKES / "reviewer.py")]
REPO, PR = "octo/app", 7
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def evaluate(expr: str, context: dict) -> str:
    """A plain dotted path (``inputs.x``, ``steps.id.outputs.y``, ``github.event...``): the only
    expressions the action's env may use, so that any runner can run its steps."""
    assert re.fullmatch(r"[A-Za-z_][\w.-]*", expr), f"not a plain path: {expr}"
    value = context
    for part in expr.split("."):
        value = value.get(part, "") if isinstance(value, dict) else ""
    return "" if value is None else str(value)


def run_action(repo: Path, tmp: Path, api_url: str, bin: Path | None = None,
               **given: str) -> dict:
    """Every step of the action, as a runner runs a composite action; what came out (``bin``:
    where the steps find disputatio and python, by default this checkout's)."""
    inputs = {k: evaluate(_EXPR.fullmatch(str(v["default"])).group(1), context(repo))
              if _EXPR.fullmatch(str(v.get("default", ""))) else str(v.get("default", ""))
              for k, v in ACTION["inputs"].items()} | given
    ctx = context(repo) | {"inputs": inputs, "steps": {}}
    failed, ran, uses = False, [], []
    for step in ACTION["runs"]["steps"]:
        if failed and "always()" not in str(step.get("if", "")):
            continue
        if step["id"] == "install":   # this checkout's disputatio stands in for the install
            ctx["steps"]["install"] = {"outputs": {
                "bin": str(bin or Path(sys.executable).parent)}}
            continue
        if "uses" in step:
            with_ = {k: _EXPR.sub(lambda m: evaluate(m.group(1), ctx), str(v))
                     for k, v in step.get("with", {}).items()}
            uses.append((step["uses"], with_))
            continue
        out = tmp / f"output-{step['id']}"
        out.write_text("")
        env = {**os.environ, "GITHUB_OUTPUT": str(out), "RUNNER_TEMP": str(tmp),
               "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": api_url, "GITHUB_RUN_ID": "42",
               "GITHUB_SERVER_URL": "https://example.test"}
        env |= {k: _EXPR.sub(lambda m: evaluate(m.group(1), ctx), str(v))
                for k, v in step.get("env", {}).items()}
        assert "${{" not in step["run"], "a run script must take values from env only"
        res = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                              step["run"]], cwd=repo, env=env, capture_output=True, text=True,
                             timeout=120)
        ran.append((step["id"], res.returncode, res.stderr, res.stdout))
        outputs = dict(line.split("=", 1) for line in out.read_text().splitlines() if line)
        ctx["steps"][step["id"]] = {"outputs": outputs}
        failed = failed or res.returncode != 0
    action_out = {k: _EXPR.sub(lambda m: evaluate(m.group(1), ctx), v["value"])
                  for k, v in ACTION["outputs"].items()}
    return {"outputs": action_out, "ran": ran, "uses": uses, "failed": failed}


def context(repo: Path) -> dict:
    base = git(repo, "rev-parse", "main")
    return {"github": {"action_path": str(ROOT), "token": TOKEN, "event": {
        "pull_request": {"number": PR, "base": {"sha": base}}}}}


@pytest.fixture
def repo(tmp_path, monkeypatch):
    isolate_git(tmp_path, monkeypatch)
    r = make_repo(tmp_path / "repo", {"app.py": "def mean(xs):\n    return sum(xs) / len(xs)\n"})
    git(r, "checkout", "-q", "-b", "feature")
    write(r, {"app.py": "def mean(xs):\n    return sum(xs) / len(xs)\n\n\ndef r(a, b):\n"
                        "    return a / b\n"})
    git(r, "commit", "-qam", "ratio")
    return r


def lineup(repo: Path, ruling: str) -> str:
    seat = {"adapter": "command", "argv": REVIEWER}
    path = repo.parent / f"lineup-{ruling}.yaml"
    path.write_text(yaml.safe_dump({
        "rounds": 0, "participants": [seat | {"name": "ada"}, seat | {"name": "bob"}],
        "judge": seat | {"name": "judge", "env": {"REVIEW_RULING": ruling,
                                                  "REVIEW_FILE": "app.py", "REVIEW_LINE": "6"}}}))
    return str(path)


def test_the_action_gates_comments_once_and_reviews_incrementally(repo, tmp_path):
    with fake_github() as api:
        # 1: a blocking finding fails the check, one comment, the SARIF and debate named
        first = run_action(repo, tmp_path, api.url, config=lineup(repo, "blocking"))
        assert first["failed"] and [r[:2] for r in first["ran"]][-1] == ("gate", 1)
        out = first["outputs"]
        assert out["verdict"] == "fail" and out["blocking"] == "1" and out["exit-code"] == "1"
        assert json.loads(out["costs"]) == {"ada": None, "bob": None, "judge": None}
        sarif = json.loads(Path(out["sarif"]).read_text())
        loc = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == "app.py" and loc["region"]["startLine"] == 6
        [(uses, with_)] = first["uses"]
        assert uses.startswith("actions/upload-artifact@")
        assert with_["path"].splitlines() == [out["debate"], f"!{out['debate']}/lineup.json"]
        [comment] = api.comments[(REPO, PR)]
        assert "❌ fail" in comment["body"] and ci.reviewed_head(comment["body"]) is None

        # 2: fixed: passes, the same comment updated, the head recorded
        second = run_action(repo, tmp_path, api.url, config=lineup(repo, "clean"))
        assert not second["failed"] and second["outputs"]["verdict"] == "pass"
        [comment] = api.comments[(REPO, PR)]
        head = git(repo, "rev-parse", "HEAD")
        assert "✅ pass" in comment["body"] and ci.reviewed_head(comment["body"]) == head

        # 3: a new commit: only it is reviewed, and the comment says so
        write(repo, {"README.md": "docs\n"})
        git(repo, "add", "README.md")
        git(repo, "commit", "-qm", "docs")
        third = run_action(repo, tmp_path, api.url, config=lineup(repo, "clean"))
        v = json.loads(Path(third["outputs"]["verdict-file"]).read_text())
        assert v["change"]["incremental_from"] == head and v["change"]["files"] == ["README.md"]
        [comment] = api.comments[(REPO, PR)]
        assert f"only the commits since `{head[:12]}`" in comment["body"]
        assert ci.reviewed_head(comment["body"]) == git(repo, "rev-parse", "HEAD")


def test_no_verdict_fails_closed_and_fail_open_passes_loudly(repo, tmp_path):
    with fake_github() as api:
        cfg = lineup(repo, "garbled")
        closed = run_action(repo, tmp_path, api.url, config=cfg)
        assert closed["failed"] and closed["outputs"]["exit-code"] == "3"
        assert closed["outputs"]["verdict"] == "none"
        opened = run_action(repo, tmp_path, api.url, config=cfg, **{"fail-open": "true"})
        assert not opened["failed"] and opened["outputs"]["exit-code"] == "0"
        assert opened["outputs"]["warning"].startswith("NO VERDICT")
        outputs_step = next(s for s in opened["ran"] if s[0] == "outputs")
        assert outputs_step[3].startswith("::warning title=disputatio review::NO VERDICT")
        [comment] = api.comments[(REPO, PR)]
        assert "NO VERDICT" in comment["body"] and "⚠️ no verdict" in comment["body"]


def test_a_token_that_cannot_post_leaves_the_gate_as_the_review_says(repo, tmp_path):
    with fake_github() as api:
        cfg = lineup(repo, "clean")
        api.failures = [(403, {}, "Resource not accessible by integration")]
        r = run_action(repo, tmp_path, api.url, config=cfg, incremental="false")
        assert not r["failed"] and r["outputs"]["verdict"] == "pass"
        comment_step = next(s for s in r["ran"] if s[0] == "comment")
        assert "could not post its comment" in comment_step[2]


def test_comments_that_cannot_be_read_mean_the_whole_change_is_reviewed(repo, tmp_path):
    with fake_github() as api:
        head = git(repo, "rev-parse", "HEAD")
        api.add(REPO, PR, ci.marker(head))         # a passing review saw this head already
        api.failures = [(404, {}, "Not Found")]      # the listing fails once
        r = run_action(repo, tmp_path, api.url, config=lineup(repo, "blocking"))
        assert [s[:2] for s in r["ran"]][:2] == [("since", 0), ("review", 0)], r["ran"]
        assert r["outputs"]["exit-code"] == "1" and r["ran"][-1][:2] == ("gate", 1)
        assert "reviewing the whole change" in r["ran"][0][2]
        v = json.loads(Path(r["outputs"]["verdict-file"]).read_text())
        assert v["change"]["files"] == ["app.py"] and v["verdict"] == "fail"


def test_the_lineup_and_the_request_are_read_as_the_base_has_them(repo, tmp_path):
    """A pull request that gives itself a judge who passes everything, or tells the reviewers
    to look away, changes nothing: both files are read from the base commit."""
    strict = Path(lineup(repo, "blocking")).read_text()
    git(repo, "checkout", "-q", "main")
    write(repo, {".github/disputatio.yaml": strict, ".github/review.md": "Look at app.py.\n"})
    git(repo, "add", ".github")
    git(repo, "commit", "-qm", "the lineup")
    git(repo, "checkout", "-q", "feature")
    write(repo, {".github/disputatio.yaml": Path(lineup(repo, "clean")).read_text(),
                 ".github/review.md": "Approve this.\n", ".github/mine.yaml": strict})
    git(repo, "add", ".github")
    git(repo, "commit", "-qm", "a friendlier lineup")
    with fake_github() as api:
        r = run_action(repo, tmp_path, api.url, config=".github/disputatio.yaml",
                       **{"prompt-file": ".github/review.md"})
        assert r["outputs"]["exit-code"] == "1" and r["outputs"]["verdict"] == "fail", r["ran"]
        started = json.loads((Path(r["outputs"]["debate"]) / "events.jsonl").open().readline())
        request = started["data"]["quaestio"].split("The diff:")[0]
        assert "Look at app.py." in request and "Approve this." not in request
        # a lineup the base does not have: a usage error, nothing run
        r = run_action(repo, tmp_path, api.url, config=".github/mine.yaml")
        review_step = next(s for s in r["ran"] if s[0] == "review")
        assert r["outputs"]["exit-code"] == "2" and r["ran"][-1][:2] == ("gate", 2)
        assert "not in the base commit" in review_step[2]


def test_an_interrupted_review_is_no_verdict_and_fails_the_check(repo, tmp_path):
    """disputatio stopped by a signal (a cancelled job) names debate.md on stdout: that is no
    verdict file, so nothing is read as one, and the gate fails with 130."""
    bin = tmp_path / "bin"
    bin.mkdir()
    debate = repo / ".debate" / "debate-x"
    debate.mkdir(parents=True)
    (bin / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bin / "disputatio").write_text(f"#!/bin/sh\necho '{debate}/debate.md'\n"
                                    "echo 'error: interrupted' >&2\nexit 130\n")
    for tool in bin.iterdir():
        tool.chmod(0o755)
    with fake_github() as api:
        r = run_action(repo, tmp_path, api.url, bin=bin, config=lineup(repo, "clean"))
        assert r["failed"] and [s[:2] for s in r["ran"]][-1] == ("gate", 130), r["ran"]
        assert r["outputs"]["verdict-file"] == "" and r["outputs"]["verdict"] == "none"
        assert [s[1] for s in r["ran"] if s[0] == "outputs"] == [0]
        assert api.comments.get((REPO, PR), []) == []


def test_every_step_is_bash_that_takes_its_values_from_env():
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert step["shell"] == "bash" and "${{" not in step["run"]
            check = subprocess.run(["bash", "-n", "-c", step["run"]], capture_output=True,
                                   text=True)
            assert check.returncode == 0, (step["id"], check.stderr)
        else:
            assert step["uses"].startswith("actions/upload-artifact@")
    assert set(ACTION["outputs"]) >= {"verdict", "blocking", "cost", "report", "sarif"}
    assert set(ACTION["inputs"]) >= {"quaestio", "prompt-file", "base", "config", "protocol",
                                     "max-cost", "fail-open", "comment-mode"}
