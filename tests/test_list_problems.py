"""disputatio list: a ledger whose first line is not an event is said to be so, in words,
and never blamed on debate.json."""

from __future__ import annotations

import json

import pytest

from support import invoke


@pytest.mark.parametrize("first, problem", [
    ("", "events.jsonl is empty"),
    ("\n", "events.jsonl is empty"),
    ("not json\n", "events.jsonl:1: not a ledger event; see disputatio verify"),
    ("{}\n", "events.jsonl:1: not a ledger event; see disputatio verify"),
    ('{"seq": 1}\n', "events.jsonl:1: not a ledger event; see disputatio verify"),
    ("[1, 2]\n", "events.jsonl:1: not a ledger event; see disputatio verify"),
])
def test_a_first_line_that_is_no_event(home, first, problem):
    folder = home / ".debate" / "debate-20261101T000000Z"
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text(first)
    ran = invoke("list", "--format", "json", cwd=home)
    assert ran.returncode == 0, ran.stderr
    [entry] = json.loads(ran.stdout)
    assert (entry["status"], entry["problem"]) == ("unreadable", problem)
