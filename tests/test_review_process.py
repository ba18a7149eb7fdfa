"""disputatio review as its own process: Ctrl-C while the judge works ends the review with exit
130, no verdict written, every agent gone; the debate can be resumed like any other."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
import yaml

from support import FAKES, MARKER_VAR, git, isolate_git, make_repo, wait_for, write

pytestmark = pytest.mark.process
REVIEWER = [sys.executable, str(FAKES / "reviewer.py")]


def test_an_interrupted_review_exits_130_and_leaves_no_verdict(tmp_path, monkeypatch, env):
    isolate_git(tmp_path, monkeypatch)
    repo = make_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {"app.py": "x = 2\n"})
    git(repo, "commit", "-qam", "two")
    prompts = tmp_path / "prompts"
    seat = {"adapter": "command", "argv": REVIEWER, "env": {"REVIEW_PROMPTS": str(prompts)}}
    cfg = tmp_path / "lineup.yaml"
    cfg.write_text(yaml.safe_dump({"rounds": 0, "participants": [
        seat | {"name": "ada"}, seat | {"name": "bob"}],
        "judge": seat | {"name": "judge", "env": {"REVIEW_PROMPTS": str(prompts),
                                                  "REVIEW_HANG": "1"}}}))
    proc = subprocess.Popen([sys.executable, "-m", "disputatio", "review", "--base", "main",
                             "--config", str(cfg), "-q"], cwd=repo,
                            env={**os.environ, MARKER_VAR: env[MARKER_VAR]},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # the judge has its prompt: two debaters answered, the third process is the judge's
        wait_for(lambda: prompts.is_dir() and len(list(prompts.iterdir())) == 3, 60,
                 "the judge started")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "disputatio resume --debate" in err
    [debate] = (repo / ".debate").glob("debate-*")
    assert out.strip() == str(debate / "debate.md")   # as any interrupted debate: the record
    assert not (debate / "verdict.json").exists() and not (debate / "findings.sarif").exists()
