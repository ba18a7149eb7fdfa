"""Whole debates as a user runs them: ``python -m disputatio … --repo`` with the five real CLIs.

Why: the adapters are proven one turn at a time elsewhere; only a full run shows that five real
CLIs side by side get their own checkouts, their answers and failures land in the artifacts,
a failed or hung participant degrades the debate instead of breaking it, and the user's
repository and process table are left as they were.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from .clis import NAMES, clean_env, lingering, write_lineup
from .model_server import Hang, Request, Rule, ScriptedModelServer, Status

pytestmark = pytest.mark.real

RUN_TIMEOUT_S = 300
QUESTION = "Should calc.add reject non-numbers?"

# how each CLI's turn requests look on the wire (cli_setup picks the models)
WIRE: dict[str, Callable[[Request], bool]] = {
    "claude": lambda r: r.family == "anthropic" and (r.model or "").startswith("claude-"),
    "codex": lambda r: r.family == "responses" and r.model == "gpt-5.5",
    "gemini": lambda r: r.family == "gemini" and r.model == "gemini-2.5-flash",
    "copilot": lambda r: r.family == "chat" and r.model == "gpt-5.4",
    "pi": lambda r: r.family == "chat" and r.model == "stub-chat",
}
# CLIs whose output carries token counts / a cost (docs/adapters.md)
REPORTS_TOKENS = {"claude", "codex", "gemini", "copilot", "pi"}  # copilot: session folder
REPORTS_COST = {"claude", "pi"}


@dataclass
class Debate:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    folder: Path | None

    def data(self) -> dict:
        return json.loads((self.folder / "debate.json").read_text())

    def info(self, server: ScriptedModelServer) -> str:
        reqs = [(r.family, r.kind, r.model, r.status) for r in server.requests]
        return (f"exit {self.returncode} after {self.seconds:.1f}s\nrequests: {reqs}\n"
                f"--- stdout\n{self.stdout}\n--- stderr\n{self.stderr[-4000:]}")


def git(repo: Path, *args: str) -> str:
    ident = ["-c", "user.email=t@t", "-c", "user.name=t"]
    return subprocess.run(["git", *ident, *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    """A small committed git repository, the user's."""
    path = tmp_path / "calcrepo"
    path.mkdir()
    (path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (path / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n"
                                       "    assert add(1, 2) == 3\n")
    git(path, "init", "-q")
    git(path, "add", ".")
    git(path, "commit", "-qm", "calc")
    return path


def run_debate(tmp_path: Path, config: Path, repo: Path, *args: str,
               on_line: Callable[[str], None] | None = None) -> Debate:
    """``python -m disputatio QUESTION --config … --repo …`` with cwd a fresh dir."""
    work = tmp_path / "work"
    work.mkdir()
    argv = [sys.executable, "-m", "disputatio", QUESTION, "--config", str(config),
            "--repo", str(repo), *args]
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=work, env=clean_env(tmp_path / "user-home"),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(RUN_TIMEOUT_S, proc.kill)  # a hung run fails, never blocks
    watchdog.start()
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
    reader.start()
    err = []
    for line in proc.stderr:  # progress arrives line by line (no TTY: plain lines)
        err.append(line)
        if on_line:
            on_line(line)
    proc.wait()
    watchdog.cancel()
    reader.join(timeout=10)
    stdout = "".join(out)
    lines = stdout.splitlines()
    folder = Path(lines[0]).parent if len(lines) == 1 else None
    return Debate(proc.returncode, stdout, "".join(err), time.monotonic() - started, folder)


def by_cli(server: ScriptedModelServer) -> dict[str, list[Request]]:
    return {name: [r for r in server.turns if match(r)] for name, match in WIRE.items()}


def test_five_real_clis_debate_in_their_own_checkouts(real_clis, model_server, repo, tmp_path):
    config = write_lineup(tmp_path / "debate.yaml", real_clis, model_server.url,
                          tmp_path / "homes")
    head = git(repo, "rev-parse", "HEAD")
    run = run_debate(tmp_path, config, repo, "--rounds", "1")
    info = run.info(model_server)
    assert run.returncode == 0 and run.folder, info
    assert run.stdout.splitlines() == [str(run.folder / "final-report.md")], info
    assert (run.folder / "final-report.md").read_text().strip(), info
    data = run.data()
    assert data["status"] == "resolved" and data["verdict"] == "RESOLVED", info
    assert [p["name"] for p in data["participants"]] == list(NAMES), info
    assert data["degraded"] == [], info
    debaters = [t for t in data["turns"] if t["phase"] in ("proposal", "reaction")]
    assert len(debaters) == 2 * len(NAMES), info
    for t in debaters:
        name = t["role"]
        assert t["ok"] and t["adapter"] == name, t
        if name in REPORTS_TOKENS:
            assert t["tokens"]["input"] > 0 and t["tokens"]["output"] > 0, t
        else:
            assert t["tokens"] is None, t
        assert (t["cost_usd"] is not None) == (name in REPORTS_COST), t
    judged = [(t["phase"], t["adapter"], t["ok"]) for t in data["turns"]
              if t["phase"] in ("respondeo", "redactio")]
    assert judged == [("respondeo", "claude", True), ("redactio", "claude", True)], info
    # every CLI really talked to the server (all four wire families), from its own checkout
    requests = by_cli(model_server)
    assert {r.family for r in model_server.turns} == {"anthropic", "responses", "chat", "gemini"}
    checkouts = set()
    for name, reqs in requests.items():
        assert reqs, f"no request from {name}\n{info}"
        body = "\n".join(r.raw.decode("utf-8", "replace") for r in reqs)
        assert str(repo) not in body, f"{name} saw the user's repository path"
        marker = f"/p/{name}/{repo.name}"
        assert marker in body, f"{name} did not run in its checkout\n{body[:2000]}"
        checkouts.update(re.findall(rf"/[^\s\"'\\]*{re.escape(marker)}", body))
    # the user's repository is untouched and the checkouts are gone
    assert git(repo, "status", "--porcelain") == "" and git(repo, "rev-parse", "HEAD") == head
    assert sorted(p.name for p in repo.iterdir()) == [".git", "calc.py", "test_calc.py"]
    assert checkouts and not [c for c in checkouts if Path(c).exists()], checkouts
    assert lingering(str(tmp_path / "homes")) == []
    print(f"\n5-CLI debate: {run.seconds:.1f}s; {run.stderr.strip().splitlines()[-1]}")


def test_a_participant_refused_with_401_degrades_the_debate(real_clis, model_server, repo,
                                                            tmp_path):
    model_server.script(Rule(WIRE["pi"], Status(401, "scripted-401: invalid x-api-key")))
    config = write_lineup(tmp_path / "debate.yaml", real_clis, model_server.url,
                          tmp_path / "homes")
    run = run_debate(tmp_path, config, repo, "--rounds", "0")
    info = run.info(model_server)
    assert run.returncode == 0 and run.folder, info
    assert run.stdout.splitlines() == [str(run.folder / "final-report.md")], info
    data = run.data()
    assert data["status"] == "resolved", info
    proposals = {t["role"]: t for t in data["turns"] if t["phase"] == "proposal"}
    assert proposals["pi"]["ok"] is False and proposals["pi"]["failure"] == "auth", info
    assert "401" in proposals["pi"]["message"], info
    assert all(proposals[n]["ok"] for n in NAMES if n != "pi"), info
    assert by_cli(model_server)["pi"] and all(r.status == 401 for r in by_cli(model_server)["pi"])
    debate_md = (run.folder / "debate.md").read_text()
    assert "**Degraded debate.**" in debate_md, debate_md
    degraded = debate_md.split("**Degraded debate.**", 1)[1].split("\n", 1)[0]
    assert "pi failed (auth) in proposal" in degraded, degraded
    assert "**Failed (auth):**" in debate_md
    print(f"\n401 debate: {run.seconds:.1f}s; degraded: {degraded.strip()}")


def test_a_hung_participant_times_out_and_leaves_no_process(real_clis, model_server, repo,
                                                            tmp_path):
    model_server.script(Rule(WIRE["codex"], Hang()))
    names = ("claude", "codex", "pi")  # fewer CLIs: the others must answer well within 12 s
    config = write_lineup(tmp_path / "debate.yaml", real_clis, model_server.url,
                          tmp_path / "homes", names=names)
    codex_home = str(tmp_path / "homes" / "codex")
    seen_during: list[list] = []
    hung: list[list] = []

    def while_hung() -> None:
        # positive control: while its request hangs, codex's processes are visible
        deadline = time.monotonic() + 60
        while not by_cli(model_server)["codex"] and time.monotonic() < deadline:
            time.sleep(0.1)
        hung.append(lingering(codex_home))

    watcher = threading.Thread(target=while_hung, daemon=True)
    watcher.start()

    def after_proposals(line: str) -> None:
        # the proposal step is over once the judge starts: the hung codex must be gone by now
        if "judge: respondeo started" in line:
            seen_during.append(lingering(codex_home))

    run = run_debate(tmp_path, config, repo, "--rounds", "0", "--timeout", "0.2",
                     on_line=after_proposals)
    info = run.info(model_server)
    assert run.returncode == 0 and run.folder, info
    data = run.data()
    assert data["status"] == "resolved", info
    proposals = {t["role"]: t for t in data["turns"] if t["phase"] == "proposal"}
    codex = proposals["codex"]
    assert codex["ok"] is False and codex["failure"] == "timeout", info
    assert 12 <= codex["duration_s"] < 12 + 5, codex  # SIGTERM, then SIGKILL after 2 s
    assert proposals["claude"]["ok"] and proposals["pi"]["ok"], info
    assert by_cli(model_server)["codex"], info
    assert "codex timed out in proposal" in (run.folder / "debate.md").read_text()
    watcher.join(timeout=5)
    assert hung and hung[0], "no codex process seen while it hung: the check would be blind"
    assert seen_during == [[]], seen_during
    assert lingering(codex_home) == [] and lingering(str(tmp_path / "homes")) == []
    slowest = max(proposals[n]["duration_s"] for n in ("claude", "pi"))
    print(f"\nhung-codex debate: {run.seconds:.1f}s; codex turn {codex['duration_s']:.1f}s "
          f"(slowest answered proposal {slowest:.1f}s of the 12 s allowed); "
          f"{len(hung[0])} codex processes while hung, none after")
