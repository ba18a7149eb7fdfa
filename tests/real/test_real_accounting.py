"""Token accounting against the real CLIs: what disputatio records is what the model reported.

Why: each CLI reports usage its own way (claude per model, codex cumulatively per thread,
gemini per model with the router, pi per message, copilot only in its session folder), and a
parser that drops a request, counts one twice or misreads cached input still "has tokens". The
scripted model server reports different numbers for every request (input, output and cached),
so a recorded figure can only equal the server's sum when every request of the turn was counted
exactly once and normalised as docs/adapters.md says.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from support.real_tier import WIRE, calc_repo, run_debate

from .clis import NAMES, participant_entry
from .model_server import Request, Rule, ScriptedModelServer, ToolCall, distinct_usage

pytestmark = pytest.mark.real

# one look at the checkout per participant, so each turn is at least two model requests
LOOKS = {
    "claude": ToolCall("Read", {"file_path": "calc.py"}),
    "codex": ToolCall("exec_command", {"cmd": "cat calc.py"}),
    "gemini": ToolCall("read_file", {"file_path": "calc.py"}),
    "copilot": ToolCall("view", {"path": "calc.py"}),
    "pi": ToolCall("read", {"path": "calc.py"}),
}
JUDGE_MODEL = "opus"  # the judge is claude too; its own model tells its requests apart


@pytest.fixture
def repo(tmp_path) -> Path:
    """The user's repository: one committed file to look at."""
    return calc_repo(tmp_path)


def judge_wire(r: Request) -> bool:
    return r.family == "anthropic" and "opus" in (r.model or "")


def participant_wire(name: str) -> Callable[[Request], bool]:
    return lambda r: WIRE[name](r) and not judge_wire(r)


def sums(requests: list[Request]) -> dict[str, int]:
    got = [r.usage for r in requests if r.usage]
    return {"input": sum(u[0] for u in got), "output": sum(u[1] for u in got),
            "cached": sum(u[2] for u in got)}


def test_every_cli_records_exactly_the_tokens_the_model_reported(real_clis, repo, tmp_path):
    rules = [Rule(participant_wire(n), LOOKS[n]) for n in NAMES]
    with ScriptedModelServer(rules, usage=distinct_usage()) as server:
        homes = tmp_path / "homes"
        judge = participant_entry("claude", real_clis["claude"], server.url, homes / "judge",
                                  display="judge")
        config = tmp_path / "debate.yaml"
        config.write_text(yaml.safe_dump({
            "participants": [participant_entry(n, real_clis[n], server.url, homes / n)
                             for n in NAMES],
            "judge": {**judge, "model": JUDGE_MODEL}}, sort_keys=False))
        run = run_debate(tmp_path, config, repo, "--rounds", "0")
        info = run.info(server)
        assert run.returncode == 0 and run.folder, info
        data = run.data()
        assert data["status"] == "resolved" and data["degraded"] == [], info
        served = [r for r in server.requests if r.usage]
        usages = [r.usage for r in served]
        assert len(set(usages)) == len(usages), "the server repeated a usage"

        turns = {t["turn_id"]: t for t in data["turns"]}
        for name in NAMES:
            mine = [r for r in served if participant_wire(name)(r)]
            assert len(mine) >= 2, f"{name}: one look and an answer expected\n{info}"
            t = turns[f"proposal/{name}"]
            recorded = {k: t["tokens"].get(k) for k in ("input", "output", "cached")}
            assert recorded == sums(mine), f"{name}: {t}\n{info}"
            assert t["session_id"], t
        judged = [t for t in data["turns"] if t["role"] == "judge"]
        assert [t["phase"] for t in judged] == ["respondeo", "redactio"], info
        recorded = {k: sum(t["tokens"][k] for t in judged) for k in ("input", "output", "cached")}
        assert recorded == sums([r for r in served if judge_wire(r)]), info

        # the totals are the server's totals, and say they are complete
        assert data["totals"]["tokens_complete"] is True, data["totals"]
        whole = {k: data["totals"]["tokens"][k] for k in ("input", "output", "cached")}
        assert whole == sums(served), data["totals"]
        md = (run.folder / "debate.md").read_text()
        n = whole["input"] + whole["output"]
        assert f" · {n / 1000:.0f}k tokens · evidence" in md, md
        # copilot's usage came from its session folder, kept with the raw output
        kept = list((run.folder / "raw").glob("*-proposal-copilot.session-events.jsonl"))
        assert len(kept) == 1 and "session.usage_record" in kept[0].read_text(), \
            sorted(p.name for p in (run.folder / "raw").iterdir())
