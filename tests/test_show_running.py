"""A debate still running, shown: a turn that has started and not ended is at work, not
"interrupted", and the debate is not "degraded" for it (text, markdown and HTML alike). Once
nothing runs the debate, the same ledger says the turn did not finish."""

from __future__ import annotations

import pytest

from disputatio import ledger, views
from disputatio.events import TurnStarted
from disputatio.render import html, report
from disputatio.render.terminal import text_report
from support.watching import add_turn, make_debate


@pytest.fixture
def events(home):
    debate = make_debate(home, participants=("ada", "bob"))
    path = debate / "events.jsonl"
    add_turn(path, "ada", "Yes.")
    ledger.Ledger(path).append(TurnStarted.TYPE, TurnStarted(
        turn_id="proposal/bob", role="bob", seat="participant", phase="proposal", round=0,
        adapter="command").to_data())
    return ledger.load(path)


def renderings(events, status: str) -> dict[str, str]:
    look = views.look(events)
    return {"text": text_report(events, status, "", look, False),
            "markdown": report.render_all(events, status, "", look).files["debate.md"],
            "html": html.render(events, status, "", look)}


# how each format says the debate is degraded
DEGRADED = {"text": "degraded: ", "markdown": "**Degraded debate.**",
            "html": '<section class="degraded">'}


def test_a_turn_at_work_in_a_running_debate(events):
    for fmt, shown in renderings(events, "running").items():
        assert "Working… (the debate is running)" in shown, fmt
        assert "did not finish" not in shown.lower(), fmt
        assert DEGRADED[fmt] not in shown, fmt


def test_the_same_turn_once_nothing_runs_the_debate(events):
    for fmt, shown in renderings(events, "unfinished").items():
        assert "Working…" not in shown, fmt
        assert "bob did not finish its proposal turn (interrupted)" in shown, fmt
        assert DEGRADED[fmt] in shown, fmt
