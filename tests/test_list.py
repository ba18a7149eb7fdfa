"""disputatio list: the debates under a base, newest first, found again by what they said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from disputatio import debates, ledger, views
from support import invoke
from support.hostile_answers import debate_with
from support.ledgers import INTERRUPTED, RESOLVED, place


def with_documents(path: Path) -> Path:
    """The folder as a debate leaves it: its documents rendered beside the ledger."""
    from disputatio import folder

    events = ledger.load(path / "events.jsonl")
    folder.write(path, events, *views.status(events))
    return path


def test_the_table_newest_first_with_every_column(home):
    place(home, RESOLVED, "20261101T100000Z")
    place(home, INTERRUPTED, "20261102T100000Z")
    ran = invoke("list", cwd=home)
    assert ran.returncode == 0, ran.stderr
    header, newest, oldest = ran.stdout.splitlines()
    assert header.split() == ["ID", "DATE", "PROTOCOL", "STATUS", "PARTICIPANTS", "TURNS",
                              "COST", "QUAESTIO"]
    assert newest.startswith("debate-20261102T100000Z") and "interrupted" in newest
    assert oldest.startswith("debate-20261101T100000Z")
    assert "resolved" in oldest and "disputatio" in oldest
    assert "advocate, skeptic, pragmatist" in oldest
    recorded = json.loads((RESOLVED / "debate.json").read_text())
    assert f"  {recorded['totals']['turns']}  " in oldest
    assert ran.stderr == ""


def test_json_says_the_same_as_the_ledger(home):
    path = place(home, RESOLVED, "20261101T100000Z")
    ran = invoke("list", "--format", "json", cwd=home)
    [entry] = json.loads(ran.stdout)
    events = ledger.load(path / "events.jsonl")
    assert entry["id"] == path.name and entry["path"] == str(path)
    assert entry["status"] == "resolved" and entry["problem"] is None
    assert entry["quaestio"] == events[0].data["quaestio"]
    assert entry["date"] == events[0].ts[:16].replace("T", " ")
    assert entry["participants"] == events[0].data["participants"]


def test_the_fast_path_reads_only_the_first_and_last_lines_of_a_current_ledger(
        home, monkeypatch):
    path = place(home, RESOLVED, "20261101T100000Z")
    slow = debates.entry(path)

    def refuse(*a, **k):
        raise AssertionError("read the whole ledger")

    monkeypatch.setattr(views.ledger, "load", refuse)
    fast = debates.entry(path)
    assert fast == slow and fast.turns == 10 and fast.status == "resolved"


def test_a_ledger_ahead_of_its_artifacts_is_read_whole(home):
    path = place(home, RESOLVED, "20261101T100000Z")
    led = ledger.Ledger(path / "events.jsonl")
    led.append("resumed", {"version": "9", "retry": []})   # debate.json now lags behind
    e = debates.entry(path)
    assert e.status == "unfinished" and e.turns == 10
    (path / ledger.LOCK_FILE).write_text(json.dumps({"pid": __import__("os").getpid(),
                                                     "started": "x", "command": "run"}))
    assert debates.entry(path).status == "running"


def test_without_all_only_the_newest_twenty(home):
    small = debate_with(home / "src", {"a": "x"})
    for n in range(23):
        place(home, small, f"202611{n + 1:02d}T000000Z")
    ran = invoke("list", cwd=home)
    rows = ran.stdout.splitlines()[1:]
    assert len(rows) == 20 and rows[0].startswith("debate-20261123T")
    assert ran.stderr.strip() == "3 older debates not shown (--all shows every one)"
    every = invoke("list", "--all", cwd=home)
    assert len(every.stdout.splitlines()) == 24 and every.stderr == ""


def test_grep_finds_quaestiones_rulings_and_reports_in_any_case(home):
    assert not (RESOLVED / "final-report.md").exists()
    with_documents(place(home, RESOLVED, "20261101T100000Z"))
    place(home, INTERRUPTED, "20261102T100000Z")
    debate_with(home / ".debate" / "debate-20261103T000000Z", {"a": "x"},
                quaestio="Should the CACHE be shared?")

    def ids(text):
        ran = invoke("list", "--grep", text, "--format", "json", cwd=home)
        return [e["id"][7:22] for e in json.loads(ran.stdout)]

    assert ids("cache BE shared") == ["20261103T000000"]
    assert ids("acceptance criteria") == ["20261101T100000"]   # final-report.md
    report = (RESOLVED / "debate.json").read_text()
    assert "acceptance criteria" not in json.loads(report)["quaestio"]
    assert ids("no debate says this") == []
    none = invoke("list", "--grep", "no debate says this", cwd=home)
    assert none.stdout == "" and "no debate mentioning" in none.stderr


def test_broken_folders_are_listed_with_their_problem(home):
    place(home, RESOLVED, "20261101T100000Z")
    root = home / ".debate"
    (root / "debate-20261102T000000Z").mkdir()
    garbage = root / "debate-20261103T000000Z"
    garbage.mkdir()
    (garbage / "events.jsonl").write_text("not json\n")
    headless = place(home, RESOLVED, "20261104T000000Z")
    lines = (headless / "events.jsonl").read_text().splitlines(keepends=True)
    (headless / "events.jsonl").write_text("".join(lines[1:]))
    (headless / "debate.json").unlink()
    ran = invoke("list", "--format", "json", cwd=home)
    assert ran.returncode == 0 and "Traceback" not in ran.stderr
    by_id = {e["id"][7:]: e for e in json.loads(ran.stdout)}
    assert by_id["20261102T000000Z"]["problem"].startswith("no events.jsonl")
    assert by_id["20261103T000000Z"]["problem"]
    assert "debate_started" in by_id["20261104T000000Z"]["problem"]
    assert by_id["20261101T100000Z"]["problem"] is None
    table = invoke("list", cwd=home)
    assert table.returncode == 0 and "unreadable" in table.stdout


@pytest.mark.parametrize("args, message", [
    (["--format", "yaml"], "error: --format must be table or json, not 'yaml'"),
    (["--home", "nowhere"], "error: --home nowhere: no such directory"),
])
def test_bad_options_are_one_line_and_exit_2(home, args, message):
    ran = invoke("list", *args, cwd=home)
    assert ran.returncode == 2 and ran.stderr.strip() == message and ran.stdout == ""


def test_home_names_another_base_and_nothing_there_says_so(home, tmp_path):
    other = tmp_path / "elsewhere"
    place(other, RESOLVED, "20261101T100000Z")
    ran = invoke("list", "--home", str(other), cwd=home)
    assert ran.stdout.splitlines()[1].startswith("debate-20261101T100000Z")
    empty = invoke("list", cwd=home)
    assert empty.returncode == 0 and empty.stdout == ""
    assert empty.stderr.strip() == f"no debate under {home / '.debate'}"


def test_no_control_sequence_of_a_debate_reaches_the_terminal(home):
    debate_with(home / ".debate" / "debate-20261101T000000Z", {"a": "x"},
                quaestio="\x1b]0;pwned\x07Q\x1b[2J?",
                participants=("\x1b[31mred\x9b31m", "b\x00c"))
    ran = invoke("list", cwd=home)
    assert ran.returncode == 0 and "Q?" in ran.stdout and "red" in ran.stdout
    assert not any(c in ran.stdout for c in "\x1b\x9b\x07\x00")
