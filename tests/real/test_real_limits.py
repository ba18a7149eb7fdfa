"""Per-seat limits with real CLIs: a participant whose model never answers times out at its
own ``timeout_minutes`` while the debate's default is far longer, and ``max_parallel`` holds
with CLIs that take real time to start and answer."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from disputatio import ledger
from support.real_tier import WIRE, by_cli, run_debate

from .clis import write_lineup
from .model_server import Hang, Rule

pytestmark = pytest.mark.real


@pytest.fixture
def small_repo(tmp_path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    (path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.email=t@t", "-c", "user.name=t",
                                               "commit", "-qm", "calc"]):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    return path


def test_a_hung_cli_stops_at_its_own_timeout_with_two_agents_at_a_time(
        real_clis, model_server, small_repo, tmp_path):
    model_server.script(Rule(WIRE["codex"], Hang()))
    config = write_lineup(tmp_path / "debate.yaml", real_clis, model_server.url,
                          tmp_path / "homes", names=("claude", "codex", "pi"), max_parallel=2)
    data = yaml.safe_load(config.read_text())
    data["participants"][1]["timeout_minutes"] = 0.2   # codex: 12 s; everyone else: 5 min
    config.write_text(yaml.safe_dump(data, sort_keys=False))

    run = run_debate(tmp_path, config, small_repo, "--rounds", "0", "--timeout", "5")
    info = run.info(model_server)
    assert run.returncode == 0 and run.folder, info
    events = ledger.load(run.folder / "events.jsonl")
    assert events[0].data["max_parallel"] == 2
    turns = {e.data["role"]: e.data for e in events if e.type == "turn_completed"}
    codex = turns["codex"]
    assert codex["failure"] == "timeout", info
    assert codex["message"] == "no answer within 12 s", codex
    assert 12 <= codex["duration_s"] < 12 + 5, codex
    assert by_cli(model_server)["codex"], info
    assert turns["claude"]["ok"] and turns["pi"]["ok"] and turns["judge"]["ok"], info
    running = peak = 0
    for e in events:
        running += {"turn_started": 1, "turn_completed": -1}.get(e.type, 0)
        peak = max(peak, running)
    assert peak == 2, [(e.type, e.data.get("role")) for e in events]
    print(f"\nper-seat timeout debate: {run.seconds:.1f}s; codex stopped after "
          f"{codex['duration_s']:.1f}s of its own 12 s")
