"""A debate folder named by a relative path (``--debate .debate/debate-…``) works with agents in
the write fence: what the fence hides from them and keeps read-only is named by absolute path
(the fence resolves a relative one inside the agent's own root, and refused to start)."""

from __future__ import annotations

import pytest

from disputatio.adapters import fence
from support import invoke, sim, write_config

FENCED = True  # tests/conftest.py leaves the fence at its default (auto) for this module
HERE = fence.available()


@pytest.mark.process
@pytest.mark.skipif(not HERE.on, reason=f"no write fence here: {HERE.reason}")
def test_continue_with_a_relative_debate_folder_in_the_fence(home):
    judge = sim("judge", DISPUTATIO_SIM_STATUS="needs_input")
    judge["name"] = "arbiter"
    cfg = write_config(home / "d.yaml", [sim("advocate"), sim("skeptic")], judge=judge,
                       rounds=0)
    r = invoke("q", "--config", str(cfg), "-q", cwd=home)
    assert r.returncode == 0, r.stderr
    debate = next(p for p in (home / ".debate").iterdir() if p.is_dir())
    relative = f".debate/{debate.name}"
    r = invoke("continue", "Speed matters; no deadline.", "--debate", relative, "-q", cwd=home)
    assert r.returncode == 0, r.stderr
    assert (debate / "final-report.md").is_file()
    assert "respondeo-2" in (debate / "events.jsonl").read_text()
