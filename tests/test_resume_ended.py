"""``resume`` of a debate that has already ended runs nothing and ends the command the way
that ending did: a debate that failed exits 1 (README's exit codes), one that ended well 0;
stdout names the deliverable either way, and the ledger is left as it was."""

from __future__ import annotations

from disputatio import ledger
from support import invoke, one_path, sim, write_config


def test_resume_of_a_force_closed_debate_says_it_ended_and_exits_1(home):
    path = write_config(home / "d.yaml", [sim("ada", DISPUTATIO_SIM_WWD="break"), sim("bob"),
                                          sim("cy")], protocol={"strict": True, "max_redos": 0})
    ran = invoke("--config", str(path), "--protocol", "wind-wall-door", "-q", "Tabs?",
                 cwd=home)
    assert ran.returncode == 1, ran.stderr
    deliverable = one_path(ran.stdout)
    events = deliverable.parent / "events.jsonl"
    before = events.read_bytes()
    assert [e.data["status"] for e in ledger.load(events)
            if e.type == "debate_ended"] == ["force_closed"]

    again = invoke("resume", "--debate", str(deliverable.parent), cwd=home)
    assert again.returncode == 1
    assert one_path(again.stdout) == deliverable
    assert again.stderr.startswith("error: nothing to resume: the debate has ended (force "
                                   "closed): Wind (ada) broke its contract once")
    assert again.stderr.count("\n") == 1
    assert events.read_bytes() == before


def test_resume_of_a_debate_that_ended_well_exits_0(home, finished):
    debate = finished("--demo", "-q")   # its deliverable: final-report.md
    again = invoke("resume", cwd=home)
    assert again.returncode == 0
    assert one_path(again.stdout) == debate / "final-report.md"
    assert again.stderr == "nothing to resume: the debate has ended (resolved)\n"
