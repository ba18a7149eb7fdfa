import json

import pytest

from disputatio import ledger


def test_append_chains_and_verifies(tmp_path):
    led = ledger.Ledger(tmp_path / "events.jsonl")
    a = led.append("debate_started", {"quaestio": "q"})
    b = led.append("turn_completed", {"text": "é"})
    assert a.prev == ledger.GENESIS and b.prev == a.hash
    assert ledger.verify(tmp_path / "events.jsonl") == (True, "ok 2 events")
    reopened = ledger.Ledger(tmp_path / "events.jsonl")
    assert [e.hash for e in reopened.events] == [a.hash, b.hash]


@pytest.mark.parametrize("line_index", [0, 1, 2])
def test_verify_detects_one_byte_change(tmp_path, line_index):
    path = tmp_path / "events.jsonl"
    led = ledger.Ledger(path)
    for i in range(3):
        led.append("e", {"n": i, "text": "abcdef"})
    lines = path.read_bytes().split(b"\n")
    target = bytearray(lines[line_index])
    pos = target.index(b"abcdef")
    target[pos] = ord("X")
    lines[line_index] = bytes(target)
    path.write_bytes(b"\n".join(lines))
    ok, message = ledger.verify(path)
    assert not ok
    assert message.startswith(f"seq {line_index + 1}:")


def test_verify_detects_deleted_event(tmp_path):
    path = tmp_path / "events.jsonl"
    led = ledger.Ledger(path)
    for i in range(3):
        led.append("e", {"n": i})
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[2]]) + "\n")
    ok, message = ledger.verify(path)
    assert not ok and message.startswith("seq 2")


def test_torn_tail_is_dropped_and_appends_continue(tmp_path):
    path = tmp_path / "events.jsonl"
    led = ledger.Ledger(path)
    led.append("a", {})
    with open(path, "ab") as fh:
        fh.write(b'{"seq": 2, "ts": "x", "ty')   # a crash in the middle of a write
    led2 = ledger.Ledger(path)
    assert len(led2.events) == 1
    led2.append("b", {})
    assert ledger.verify(path) == (True, "ok 2 events")


def test_each_event_is_on_disk_when_append_returns(tmp_path):
    path = tmp_path / "events.jsonl"
    led = ledger.Ledger(path)
    led.append("a", {"x": 1})
    obj = json.loads(path.read_text().splitlines()[0])
    assert obj["type"] == "a" and obj["seq"] == 1 and len(obj["hash"]) == 64


def test_last_event_missing_only_its_newline_is_kept(tmp_path):
    path = tmp_path / "events.jsonl"
    led = ledger.Ledger(path)
    led.append("a", {})
    led.append("b", {})
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    led2 = ledger.Ledger(path)
    assert [e.type for e in led2.events] == ["a", "b"]
    led2.append("c", {})
    assert ledger.verify(path) == (True, "ok 3 events")


def test_garbage_line_in_the_middle_is_an_error(tmp_path):
    path = tmp_path / "events.jsonl"
    led = ledger.Ledger(path)
    led.append("a", {})
    with open(path, "ab") as fh:
        fh.write(b"garbage\n")
    with pytest.raises(ledger.LedgerError, match="events.jsonl:2: not a ledger event"):
        ledger.Ledger(path)
