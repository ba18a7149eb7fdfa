"""A turn whose output shows the CLI can only retry ends early (``Invocation.give_up``).

Why: codex with no network never stops by itself, so without this a dead network costs the
whole per-turn timeout (and ``--doctor`` its 90 s canary timeout). The output it prints is the
real recorded one (tests/fixtures/captures/codex/no_network.stdout); a process stands in for
codex so the transport really watches a growing file and ends a live process group.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import time
from pathlib import Path

import pytest

from disputatio.adapters import transport
from disputatio.adapters.base import API_ERROR, Invocation, TurnRequest
from disputatio.adapters.codex import ADAPTER, NO_NETWORK
from support.captures import FIX, real

RECORDED = FIX / "codex" / "no_network.stdout"
ANSWER = FIX / "codex" / "success.stdout"


def script(*steps: str) -> tuple[str, ...]:
    """argv of a process that runs ``steps`` (Python statements) with stdout unbuffered."""
    body = "import pathlib, sys, time\n" + "\n".join(steps)
    return (sys.executable, "-u", "-c", body)


def emit(path: Path) -> str:
    return f"sys.stdout.write(pathlib.Path({str(path)!r}).read_text())"


def run(argv: tuple[str, ...], tmp_path: Path, patience_s: float, timeout_s: float = 60):
    rule = dataclasses.replace(NO_NETWORK, patience_s=patience_s)
    inv = Invocation(argv=argv, give_up=rule)
    started = time.monotonic()
    cap = transport.run(inv, tmp_path, timeout_s, tmp_path / "raw", "turn")
    return cap, time.monotonic() - started


def test_the_recorded_retry_loop_ends_the_turn_at_once(tmp_path):
    cap, seconds = run(script(emit(RECORDED), "time.sleep(3600)"), tmp_path, patience_s=0)
    assert cap.gave_up is not None and not cap.timed_out and cap.signal is None
    assert seconds < 10
    assert transport.live_pids() == []
    r = ADAPTER.parse(cap)
    assert not r.ok and r.failure == API_ERROR
    assert r.message.startswith("codex cannot reach its API and only retries (ended after ")
    assert r.message.endswith("codex last said: Reconnecting... waiting for network "
                              "(Connection failed: error sending request)")
    # the whole output stays where the transport records it
    assert cap.stdout_path.read_text() == RECORDED.read_text()


@pytest.mark.process
def test_a_short_outage_within_the_patience_is_survived(tmp_path):
    """Retries, then the answer a second later: with 10 s of patience the turn succeeds."""
    cap, _ = run(script(emit(RECORDED), "time.sleep(1)", emit(ANSWER)), tmp_path,
                 patience_s=10)
    assert cap.gave_up is None and cap.exit_code == 0
    r = ADAPTER.parse(cap)
    assert r.ok and r.text == "STUB_OK: hello from the local stub"


@pytest.mark.process
def test_progress_after_the_retries_restarts_the_clock(tmp_path):
    """A retry, then other events every 0.3 s for 3 s: never 1 s of retries alone."""
    progress = ('for _ in range(10):\n'
                '    print(\'{"type":"item.started","item":{"type":"reasoning"}}\')\n'
                '    time.sleep(0.3)')
    cap, seconds = run(script(emit(RECORDED), progress), tmp_path, patience_s=1)
    assert cap.gave_up is None and cap.exit_code == 0 and seconds >= 3


@pytest.mark.process
def test_the_patience_runs_out_while_only_retries_come(tmp_path):
    cap, seconds = run(script(emit(RECORDED), "time.sleep(3600)"), tmp_path, patience_s=2)
    assert cap.gave_up is not None
    assert 2 <= seconds < 10


@pytest.mark.process
def test_the_timeout_still_wins_over_a_longer_patience(tmp_path):
    cap, seconds = run(script(emit(RECORDED), "time.sleep(3600)"), tmp_path, patience_s=30,
                       timeout_s=1)
    assert cap.timed_out and cap.gave_up is None
    assert seconds < 1 + transport.TERM_GRACE_S + 5


def test_answers_and_other_errors_never_match():
    """The pattern matches only the endless retry event, never a counted retry, a fallback
    notice or an answer, in every recorded codex run."""
    rule = re.compile(NO_NETWORK.pattern)
    for path in sorted((FIX / "codex").glob("*.stdout")):
        hits = [ln for ln in path.read_bytes().splitlines() if rule.search(ln)]
        if path.name == "no_network.stdout":
            assert len(hits) == 4
        else:
            assert hits == [], path.name


def test_debate_turns_get_a_minute_of_patience():
    inv = ADAPTER.build(TurnRequest(prompt="p", bin="codex"))
    assert inv.give_up == NO_NETWORK and NO_NETWORK.patience_s == 60


def test_a_recorded_timeout_still_names_codexs_last_words():
    cap = dataclasses.replace(real("codex/no_network"), timed_out=True, duration_s=60)
    r = ADAPTER.parse(cap)
    assert r.failure == "timeout" and "codex last said: Reconnecting... waiting for" in r.message
