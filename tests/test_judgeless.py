"""A lineup without a judge (Disputatio's format) debates alone: proposals and reactions, then
debate.md on stdout and exit 0; what needs a judge says why it cannot apply."""

from __future__ import annotations

import json

from support import invoke, sim, write_config


def _lineup(home):
    return write_config(home / "alone.yaml", [sim("a"), sim("b")], judge=False, rounds=1)


def test_a_debate_without_a_judge_ends_after_the_reactions(home):
    r = invoke("q", "--config", str(_lineup(home)), cwd=home)
    assert r.returncode == 0, r.stderr
    primary = home / r.stdout.strip()
    assert primary.name == "debate.md"
    folder = primary.parent
    assert not list(folder.glob("respondeo*.md")) and not (folder / "final-report.md").exists()
    data = json.loads((folder / "debate.json").read_text())
    assert data["status"] == "debated" and data["judge"] is None and data["verdict"] is None
    assert [t["phase"] for t in data["turns"]] == ["proposal"] * 2 + ["reaction"] * 2
    assert "**Judge:** none" in primary.read_text()

    for args, why in ((["--continue", "yes"], "no questions to answer"),
                      (["--finalize"], "no ruling to draft a report from")):
        r2 = invoke(*args, cwd=home)
        assert r2.returncode == 2, r2.stderr
        assert why in r2.stderr and r2.stderr.count("\n") == 1
    r3 = invoke("--resume", cwd=home)
    assert r3.returncode == 0
    assert "nothing to resume: the debate has ended (debated)" in r3.stderr
    assert invoke("--verify", cwd=home).returncode == 0
