"""Whole debates as a user runs them: ``python -m disputatio … --repo`` with the five real CLIs.

Why: the adapters are proven one turn at a time elsewhere; only a full run shows that five real
CLIs side by side get their own checkouts, their answers and failures land in the artifacts,
a failed or hung participant degrades the debate instead of breaking it, and the user's
repository and process table are left as they were.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest

from support.real_tier import WIRE, by_cli, calc_repo, git, run_debate

from .clis import NAMES, lingering, write_lineup
from .model_server import Hang, Rule, Status

pytestmark = pytest.mark.real

# CLIs whose output carries token counts / a cost (docs/adapters.md)
REPORTS_TOKENS = {"claude", "codex", "gemini", "copilot", "pi"}  # copilot: session folder
REPORTS_COST = {"claude", "pi"}


@pytest.fixture
def repo(tmp_path) -> Path:
    """A small committed git repository, the user's, with a test of its own."""
    return calc_repo(tmp_path, {"test_calc.py": "from calc import add\n\n\ndef test_add():\n"
                                                "    assert add(1, 2) == 3\n"})


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
        # checkouts are numbered in lineup order (a name there would reach the judge)
        marker = f"/p/{list(NAMES).index(name) + 1}/{repo.name}"
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
