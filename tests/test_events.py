"""The typed ledger events (events.py): one schema for every writer and reader.

Why: the hash chain covers the canonical JSON of each event's ``data``, so the models must write
exactly what the dicts they replaced wrote; ledgers of older versions (fields missing) must
still load, replay, render, resume and verify; fields and event types of newer versions must be
kept and ignored; and docs/architecture.md's event table must not drift from the models.

The ledgers under tests/fixtures/ledgers/ were written by earlier versions, with the simulated
participants (README.md there says how): v0.1.0-41135e7 before the write fence and raw_stem,
v0.1.0-e26cab3 by the last version whose writers built plain dicts.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from pydantic import ValidationError

from disputatio import app, events, ledger
from disputatio.folder import render_all
from disputatio.protocols import disputatio as proto
from disputatio.protocols.disputatio import State as DebateState
from disputatio.render import summary

LEDGERS = Path(__file__).parent / "fixtures" / "ledgers"
OLD = LEDGERS / "v0.1.0-41135e7"
OLD_INTERRUPTED = LEDGERS / "v0.1.0-41135e7-interrupted"
DICTS = LEDGERS / "v0.1.0-e26cab3"
ALL_FIXTURES = [OLD, OLD_INTERRUPTED, DICTS]
ARCHITECTURE = Path(__file__).parents[1] / "docs" / "architecture.md"


def _load(folder: Path) -> list[ledger.Event]:
    return ledger.load(folder / "events.jsonl")


def _copy(folder: Path, tmp_path: Path) -> Path:
    debate = tmp_path / folder.name
    debate.mkdir()
    for name in ("events.jsonl", "lineup.json", "debate.json"):
        shutil.copy(folder / name, debate / name)
    return debate


def _render(evs):
    end = [e for e in evs if e.type in ("debate_ended", "interrupted")][-1]
    return render_all(evs, end.data.get("status", "interrupted"), end.data.get("reason", ""))


# --- the bytes ---------------------------------------------------------------------------

def test_the_models_write_exactly_what_the_dict_writers_wrote():
    evs = _load(DICTS)
    assert {e.type for e in evs} >= {"debate_started", "turn_started", "turn_completed",
                                     "resumed", "answers_given", "finalize_requested",
                                     "debate_ended"}
    for ev in evs:
        model = events.parse(ev)
        assert model is not None, ev.type
        assert ledger.canonical(model.to_data()) == ledger.canonical(ev.data), ev.seq


def test_whole_numbers_stay_ints_and_optional_fields_stay_out():
    started = events.DebateStarted(quaestio="Q", rounds=1, participants=["a", "b"],
                                   timeout_s=600, budget_usd=None, fence="bwrap 0.8.0")
    data = started.to_data()
    assert b'"timeout_s":600,' in ledger.canonical(data)
    assert "fence_reason" not in data and data["budget_usd"] is None
    ended = events.TurnCompleted(turn_id="proposal/a", role="a", phase="proposal", round=0,
                                 ok=True, cost_usd=0, duration_s=1.5)
    data = ended.to_data()
    assert data["cost_usd"] == 0 and isinstance(data["cost_usd"], int)
    assert "text_cut_bytes" not in data and "raw_stem" not in data
    assert events.TurnCompleted(**{**data, "text_cut_bytes": 7}).to_data()["text_cut_bytes"] == 7


def test_a_writer_cannot_add_a_field_by_misspelling_one():
    with pytest.raises(ValidationError, match="no field cost_usdd"):
        events.TurnCompleted(turn_id="proposal/a", role="a", phase="proposal", round=0,
                             ok=True, cost_usdd=0.1)


# --- older ledgers -----------------------------------------------------------------------

@pytest.mark.parametrize("folder", ALL_FIXTURES, ids=lambda p: p.name)
def test_every_fixture_verifies(folder):
    recorded = json.loads((folder / "debate.json").read_text())["ledger"]
    ok, message = ledger.verify(folder / "events.jsonl", (recorded["events"], recorded["head"]))
    assert ok, message


def test_an_old_ledger_reads_with_its_missing_fields_as_not_recorded():
    evs = _load(OLD)
    assert not any("raw_stem" in e.data or "fence" in e.data for e in evs)
    state = DebateState.from_events(evs)
    assert state.started.fence is None and state.started.max_parallel is None
    assert all(t.raw_stem is None for t in state.turns.values())
    md = _render(evs).files["debate.md"]
    assert "Write fence" not in md
    assert json.loads(_render(evs).files["debate.json"])["fence"] is None


@pytest.mark.parametrize("folder", ALL_FIXTURES, ids=lambda p: p.name)
def test_old_ledgers_replay_and_render_as_their_version_did(folder):
    evs = _load(folder)
    old = json.loads((folder / "debate.json").read_text())
    new = json.loads(_render(evs).files["debate.json"])
    for key in ("status", "verdict", "rounds", "judge", "answers", "degraded", "ledger"):
        assert new[key] == old[key], key
    assert [(t["turn_id"], t["ok"], t["failure"]) for t in new["turns"]] == \
        [(t["turn_id"], t["ok"], t["failure"]) for t in old["turns"]]
    assert {k: new["totals"][k] for k in ("turns", "failed", "cost_usd")} == \
        {k: old["totals"][k] for k in ("turns", "failed", "cost_usd")}


def test_replaying_the_old_ledger_gives_the_protocol_what_it_saw():
    evs = _load(OLD)
    state = DebateState.from_events(evs)
    # the skeptic's and the pragmatist's failed proposals were retried by --resume
    assert all(state.turns[f"proposal/{p}"].ok for p in state.participants)
    assert state.answers == ["Correctness first; no deadline."] and state.finalizes == 1
    assert proto.next_step(state).status == "resolved"
    interrupted = DebateState.from_events(_load(OLD_INTERRUPTED))
    step = proto.next_step(interrupted)   # the interrupted proposal runs again
    assert [t.turn_id for t in step.turns] == ["proposal/skeptic"]


def test_an_old_resolved_debate_is_finalized_again_and_verifies(tmp_path):
    debate = _copy(OLD, tmp_path)
    outcome = app.finalize(debate, quiet=True, fence="off")
    assert (outcome.code, outcome.status) == (app.EXIT_OK, "resolved"), outcome.message
    evs = _load(debate)
    assert [e.type for e in evs[-4:]] == ["finalize_requested", "turn_started", "turn_completed",
                                         "debate_ended"]
    assert evs[-2].data["turn_id"] == "redactio-2.2"
    assert "raw_stem" in evs[-2].data   # new events carry what this version writes
    assert app.verify(debate).code == app.EXIT_OK
    assert "re-draft 2" in (debate / "debate.md").read_text()


def test_an_old_interrupted_debate_resumes_to_its_end(tmp_path):
    debate = _copy(OLD_INTERRUPTED, tmp_path)
    # the cause is fixed first, as a user would: the skeptic no longer hangs
    lineup = json.loads((debate / "lineup.json").read_text())
    lineup["lineup"]["skeptic"]["env"] = {}
    (debate / "lineup.json").write_text(json.dumps(lineup))
    outcome = app.resume(debate, quiet=True, fence="off")
    assert (outcome.code, outcome.status) == (app.EXIT_OK, "resolved"), outcome.message
    assert app.verify(debate).code == app.EXIT_OK
    data = json.loads((debate / "debate.json").read_text())
    assert data["verdict"] == "RESOLVED" and data["totals"]["failed"] == 0
    assert (debate / "final-report.md").is_file()


# --- newer ledgers -----------------------------------------------------------------------

@dataclass(frozen=True)
class Ev:
    type: str
    data: dict
    ts: str = "2026-11-29T10:00:00.000Z"
    seq: int = 0


def _from_the_future(evs):
    """The same debate as a newer version might write it: a field more on every event, and
    an event type this version has never heard of."""
    newer = [Ev(e.type, {**e.data, "from_the_future": {"x": [1, 2]}}, e.ts, e.seq) for e in evs]
    return [*newer[:3], Ev("human_steered", {"text": "focus"}, evs[2].ts, 0), *newer[3:]]


def test_unknown_fields_are_kept_and_unknown_events_skipped():
    evs = _load(DICTS)
    newer = _from_the_future(evs)
    model = events.parse(newer[1])
    assert model.model_extra == {"from_the_future": {"x": [1, 2]}}
    assert model.to_data()["from_the_future"] == {"x": [1, 2]}
    assert events.parse(newer[3]) is None
    # ignored: the protocol's next step and every artifact are what the debate itself gives
    assert proto.next_step(DebateState.from_events(newer)) == \
        proto.next_step(DebateState.from_events(evs))
    old, new = _render(evs), _render(newer)
    assert new.primary == old.primary
    for name, content in old.files.items():
        if name != "debate.json":   # it counts the events: one more here
            assert new.files[name] == content, name


def test_an_event_this_version_cannot_read_names_its_seq_and_field():
    evs = _load(DICTS)
    n = next(i for i, e in enumerate(evs) if e.type == "turn_completed")
    ev = evs[n]
    bad = [*evs[:n], replace(ev, data={**ev.data, "round": "first"}), *evs[n + 1:]]
    with pytest.raises(events.EventError, match=rf"^seq {ev.seq}: turn_completed: round: "):
        DebateState.from_events(bad)
    missing = replace(ev, data={k: v for k, v in ev.data.items() if k != "ok"})
    with pytest.raises(events.EventError,
                       match=rf"^seq {ev.seq}: turn_completed: ok: Field required"):
        summary.turns([missing])


def test_resume_refuses_a_ledger_it_cannot_read(tmp_path):
    debate = _copy(DICTS, tmp_path)
    lines = (debate / "events.jsonl").read_bytes().split(b"\n")
    (debate / "debate.json").unlink()   # its recorded head would not match the rewrite
    evs, prev = [], ledger.GENESIS
    for raw in filter(None, lines):
        obj = json.loads(raw)
        if obj["type"] == "turn_completed" and obj["data"]["turn_id"] == "proposal/advocate":
            obj["data"]["round"] = "first"
            seq = obj["seq"]
        obj["prev"] = prev
        obj["hash"] = prev = ledger.event_hash(obj["seq"], obj["ts"], obj["type"], obj["data"],
                                               prev)
        evs.append(ledger.canonical(obj))
    (debate / "events.jsonl").write_bytes(b"\n".join(evs) + b"\n")
    with pytest.raises(app.BrokenLedger, match=f"seq {seq}: turn_completed: round"):
        app.resume(debate, quiet=True, fence="off")
    assert (debate / "events.jsonl").read_bytes() == b"\n".join(evs) + b"\n"   # untouched


# --- one type for a turn ---------------------------------------------------------------------

def test_the_protocol_and_the_views_read_the_same_turn_record():
    evs = _load(DICTS)
    state = DebateState.from_events(evs)
    views = {v.turn.turn_id: v for v in summary.turns(evs)}
    for turn_id, turn in state.turns.items():
        assert views[turn_id].turn is not turn            # each reader parses for itself
        assert views[turn_id].turn == turn                # into the same type and value
        assert type(turn) is events.TurnCompleted


def test_a_turn_that_never_ended_is_unfinished_in_the_views():
    evs = _load(OLD_INTERRUPTED)
    views = {v.turn.turn_id: v for v in summary.turns(evs[:3])}   # both started, none ended
    assert [v.ok for v in views.values()] == [None, None]
    assert views["proposal/skeptic"].turn.cost_usd is None


# --- the docs ------------------------------------------------------------------------------

def event_table() -> str:
    rows = ["| type | written | data |", "|---|---|---|"]
    for cls in events.ALL:
        rows.append(f"| `{cls.TYPE}` | {cls.WHEN} | {', '.join(cls.model_fields)} |")
    return "\n".join(rows)


def test_the_architecture_docs_list_every_event_and_field():
    text = ARCHITECTURE.read_text()
    m = re.search(r"^\| type \| written \| data \|\n(?:\|.*\|\n)+", text, re.M)
    assert m, "docs/architecture.md has no ledger event table"
    assert m.group(0).rstrip("\n") == event_table(), \
        "docs/architecture.md's event table drifted from events.py; it should read:\n" + \
        event_table()


# --- the layering ------------------------------------------------------------------------------

SRC = Path(__file__).parents[1] / "src" / "disputatio"
PURE_HELPERS = {"disputatio.events", "disputatio.text"}


@pytest.mark.parametrize("package", ["protocols", "render"])
def test_protocols_and_renderers_read_the_ledger_only_through_events(package):
    import ast

    for module in sorted((SRC / package).glob("*.py")):
        tree = ast.parse(module.read_text())
        found = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        found |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        ours = {m for m in found if m.split(".")[0] == "disputatio"}
        own = f"disputatio.{package}"
        assert {m for m in ours if m != own and not m.startswith(own + ".")} <= PURE_HELPERS, \
            module.name
