"""A committee meeting of real CLIs against the scripted model server: members speak in round
1 and pass in round 2, so the meeting ends all-passed; and a meeting killed with -9 while a
member's round-2 request hangs, which ``disputatio resume`` finishes.

Why: the pure tests prove the rules; only real CLIs show that the pass rule reaches them, that
their ``<PASS/>`` comes back through each adapter exactly, and that a killed meeting resumes
with the real processes gone.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from support.real_tier import calc_repo

from .clis import clean_env, lingering, write_lineup
from .model_server import Hang, Rule, ScriptedModelServer, Text

pytestmark = pytest.mark.real

MEMBERS = ("claude", "pi")
QUESTION = "Should calc.add reject non-numbers?"
ROUND_2 = "round 2 of at most"


def committee(tmp_path: Path, real_clis, server: ScriptedModelServer) -> Path:
    """The lineup of MEMBERS pointed at the server, without a judge: a short meeting."""
    path = write_lineup(tmp_path / "committee.yaml", real_clis, server.url, tmp_path / "homes",
                        names=MEMBERS)
    data = yaml.safe_load(path.read_text())
    del data["judge"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def cli(tmp_path: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "disputatio", *args], cwd=work,
                          env=clean_env(tmp_path / "user-home"), capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def round_of(req) -> int | None:
    for rnd in (1, 2, 3):
        if f"round {rnd} of at most" in req.prompt:
            return rnd
    return None


def test_real_members_pass_in_round_two(real_clis, model_server, repo_path, tmp_path):
    model_server.script(Rule(ROUND_2, Text("<PASS/>")))
    config = committee(tmp_path, real_clis, model_server)
    started = time.monotonic()
    run = cli(tmp_path, "run", "--protocol", "committee", "--config", str(config), "--repo",
              str(repo_path), QUESTION)
    info = f"exit {run.returncode}\n{run.stderr[-3000:]}"
    assert run.returncode == 0, info
    minutes = Path(run.stdout.strip())
    assert minutes.name == "minutes.md", info
    data = json.loads((minutes.parent / "debate.json").read_text())
    assert data["status"] == "all-passed", info
    assert data["reason"] == "every member passed in round 2"
    got = {t["turn_id"]: t for t in data["turns"]}
    assert sorted(got) == sorted(f"round-{r}/{n}" for r in (1, 2) for n in MEMBERS), info
    assert all(t["ok"] and t["adapter"] == t["role"] for t in got.values()), got
    # every member got the pass rule in its prompt; in round 2 it saw the other's round 1
    rounds = {(req.model, round_of(req)) for req in model_server.turns}
    assert {r for _, r in rounds} == {1, 2}, rounds
    second = [req for req in model_server.turns if round_of(req) == 2]
    assert second and all("`<PASS/>` and nothing else" in req.prompt for req in second)
    assert all("Proposal from" in req.prompt for req in second)
    text = minutes.read_text()
    assert "**The meeting ended:** every member passed in round 2." in text
    assert text.count("Passed in round 2.") == 2
    assert lingering(str(tmp_path / "homes")) == []
    print(f"\ncommittee of {', '.join(MEMBERS)}: {time.monotonic() - started:.1f}s")


def test_a_real_meeting_killed_with_9_is_finished_by_resume(real_clis, model_server,
                                                            repo_path, tmp_path):
    # pi's first round-2 request hangs; once disputatio is killed it answers like the rest
    model_server.script(Rule(lambda r: ROUND_2 in r.prompt and r.model == "stub-chat",
                             Hang(), once=True),
                        Rule(ROUND_2, Text("<PASS/>")))
    config = committee(tmp_path, real_clis, model_server)
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "disputatio", "run", "--protocol",
                             "committee", "--config", str(config), "--repo", str(repo_path),
                             "-q", QUESTION], cwd=work, env=clean_env(tmp_path / "user-home"),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    watchdog = threading.Timer(180, proc.kill)
    watchdog.start()
    try:
        deadline = time.monotonic() + 150
        while not any(round_of(r) == 2 and r.model == "stub-chat" for r in model_server.turns):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.1)
        proc.kill()
        proc.wait()
    finally:
        watchdog.cancel()
    folder = next((work / ".debate").glob("debate-*"))
    assert cli(tmp_path, "verify", "--debate", str(folder)).returncode == 0
    resumed = cli(tmp_path, "resume", "--debate", str(folder), "-q")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert Path(resumed.stdout.strip()) == folder / "minutes.md"
    data = json.loads((folder / "debate.json").read_text())
    assert data["status"] == "all-passed", data["reason"]
    assert {t["turn_id"] for t in data["turns"] if t["ok"]} == {
        f"round-{r}/{n}" for r in (1, 2) for n in MEMBERS}
    assert cli(tmp_path, "verify", "--debate", str(folder)).returncode == 0
    assert lingering(str(tmp_path / "homes")) == []


@pytest.fixture
def repo_path(tmp_path) -> Path:
    """A small committed git repository, the user's."""
    return calc_repo(tmp_path)
