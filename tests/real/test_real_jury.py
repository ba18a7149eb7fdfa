"""A jury of two different real CLIs (claude judges, codex sits beside it) against the scripted
model server, as a user runs it.

Why: the aggregation is proven pure elsewhere; only real CLIs show that a juror's prompt lists
the points the judge fixed and reaches a second vendor's CLI, that each real answer's block is
read, and that the votes of two vendors are counted per point — here codex (weight 2) outvotes
claude, so the point is rejected with claude's dissent on record.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from support.real_tier import WIRE, calc_repo, run_debate

from .clis import participant_entry, write_lineup
from .model_server import Rule, Text, judge_ruling


@pytest.fixture
def calc(tmp_path) -> Path:
    """A small committed git repository, the user's."""
    return calc_repo(tmp_path)


def test_a_jury_of_two_real_clis_rules_point_by_point(real_clis, model_server, calc, tmp_path):
    # codex sits only on the jury here, so every codex request is a juror's: it rejects
    model_server.script(Rule(lambda r: WIRE["codex"](r) and "(phase: respondeo" in r.prompt,
                             Text(judge_ruling("## The points to rule on\n> \"id\": \"F1\"",
                                               "gpt-5.5", "rejected"))))
    # the debaters share a vendor with neither judge, so recusal seats both
    config = write_lineup(tmp_path / "debate.yaml", real_clis, model_server.url,
                          tmp_path / "homes", names=("gemini", "pi"))
    data = yaml.safe_load(config.read_text())
    data["jury"] = [{**participant_entry("codex", real_clis["codex"], model_server.url,
                                         tmp_path / "homes" / "codex", display="juror-codex"),
                     "weight": 2}]
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    run = run_debate(tmp_path, config, calc, "--rounds", "0")
    info = run.info(model_server)
    assert run.returncode == 0 and run.folder, info
    record = run.data()
    judged = [(t["turn_id"], t["adapter"], t["ok"]) for t in record["turns"]
              if t["phase"] == "respondeo"]
    assert judged == [("respondeo-1", "claude", True),
                      ("respondeo-1/juror-codex", "codex", True)], info
    # the juror's prompt reached codex with the point fixed by claude's ruling
    asked = [r for r in model_server.turns if WIRE["codex"](r)]
    assert asked and "## The points to rule on" in asked[-1].prompt, info
    assert '"id": "F1"' in asked[-1].prompt and "the change needs a test" in asked[-1].prompt
    judgment = record["judgment"]
    assert judgment["judges"]["ruled"] == 2 and judgment["judges"]["seated"] == 2, info
    (f,) = record["findings"]
    assert (f["id"], f["ruling"], f["margin"], f["dissent"]) == ("F1", "rejected", 1.0,
                                                                ["judge"]), f
    assert {(v["judge"], v["ruling"], v["weight"]) for v in f["votes"]} == {
        ("judge", "upheld", 1.0), ("juror-codex", "rejected", 2.0)}
    assert record["verdict"] == "RESOLVED" and record["status"] == "resolved", info
    text = (run.folder / "respondeo.md").read_text()
    assert "**Jury:** 2 of 2 judges ruled (judge, juror-codex)" in text
    assert "Dissent — judge (upheld):" in text
    print(f"\njury of claude and codex: {run.seconds:.1f}s; "
          f"{json.dumps(f['votes'])[:200]}")
