import io
import re

from disputatio import progress
from disputatio.adapters.base import TurnResult
from disputatio.protocols.base import TurnSpec

SPEC_A = TurnSpec("proposal/a", "a", "participant", "proposal", 0, "proposal")
SPEC_B = TurnSpec("reaction-1/b", "b", "participant", "reaction", 1, "reaction")


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_plain_lines_have_no_control_codes():
    out = io.StringIO()
    clock = FakeClock()
    p = progress.PlainProgress(out, clock=clock)
    p.header(".debate/debate-x", "a, b · judge j")
    p.phase("proposals", ["a", "b"])
    p.turn_started(SPEC_A)
    clock.now += 2.5
    p.turn_finished(SPEC_A, TurnResult(ok=True, text="x", cost_usd=0.12,
                                       tokens={"input": 1500, "output": 500}), 2.5)
    p.turn_finished(SPEC_B, TurnResult.failed("timeout", "no answer within 600 s"), 600)
    text = out.getvalue()
    assert "\x1b" not in text
    lines = text.splitlines()
    assert len(lines) == 5
    assert lines[3].endswith("a: proposal done in 2.5s · $0.12 · 2.0k tok")
    assert "[   2.5s]" in lines[3]
    assert lines[4].endswith("b: reaction FAILED (timeout) no answer within 600 s")


def test_plain_unknown_cost_is_not_zero():
    out = io.StringIO()
    p = progress.PlainProgress(out, clock=FakeClock())
    p.turn_finished(SPEC_A, TurnResult(ok=True, text="x"), 1.0)
    assert "$" not in out.getvalue() and "done in 1.0s" in out.getvalue()


def test_quiet_prints_nothing():
    out = io.StringIO()
    p = progress.make(quiet=True, stream=out)
    p.phase("proposals", ["a"])
    p.turn_started(SPEC_A)
    assert out.getvalue() == ""


def test_make_picks_plain_for_a_pipe():
    assert isinstance(progress.make(stream=io.StringIO()), progress.PlainProgress)


def test_live_table_shows_rows_states_and_spend():
    out = io.StringIO()
    clock = FakeClock()
    live = progress.LiveProgress(out, clock=clock, force_terminal=True)
    live.header(".debate/debate-x", "a, b · judge j")
    live.phase("reactions 1/2", ["a", "b"])
    live.turn_started(SPEC_A)
    live.turn_started(SPEC_B)
    clock.now += 3
    live.turn_finished(SPEC_A, TurnResult(ok=True, text="x", cost_usd=0.5,
                                          tokens={"input": 900, "output": 100}), 3.0)
    live.turn_finished(SPEC_B, TurnResult.failed("auth", "Not logged in"), 1.0)
    live.console.print(live._render())
    live.close()
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert "phase: reactions 1/2" in plain
    row_a = next(line for line in plain.splitlines() if "│ a " in line)
    assert "done" in row_a and "$0.50" in row_a and "3.0s" in row_a and "1.0k tok" in row_a
    row_b = next(line for line in plain.splitlines() if "│ b " in line)
    assert "failed: auth" in row_b and "$" not in row_b
    assert "\x1b[" in out.getvalue()   # a terminal gets control codes


def test_names_and_messages_cannot_drive_the_terminal():
    """A participant name or a CLI's error text is shown as text: no escape sequence it holds
    reaches the terminal, and the live table does not read it as rich markup."""
    hostile = "[bold red]x\x1b]0;pwned\x07"
    spec = TurnSpec(f"proposal/{hostile}", hostile, "participant", "proposal", 0, "proposal")
    plain = io.StringIO()
    p = progress.PlainProgress(plain, clock=FakeClock())
    p.turn_finished(spec, TurnResult.failed("api_error", "boom\x1b]2;owned\x07\x1b[2J"), 1.0)
    assert "\x1b" not in plain.getvalue() and "\x07" not in plain.getvalue()
    live_out = io.StringIO()
    live = progress.LiveProgress(live_out, clock=FakeClock(), force_terminal=True)
    live.phase("proposals", [hostile])
    live.close()
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", live_out.getvalue())  # rich's own CSI codes
    assert "[bold red]x" in shown
    assert "\x1b]" not in live_out.getvalue() and "\x07" not in live_out.getvalue()


def test_live_spend_marks_a_lower_bound_when_a_turn_reported_no_tokens():
    out = io.StringIO()
    live = progress.LiveProgress(out, clock=FakeClock(), force_terminal=False)
    live.phase("proposals", ["a", "b"])
    live.turn_finished(SPEC_A, TurnResult(ok=True, text="x", tokens={"input": 900}), 1.0)
    live.turn_finished(SPEC_A, TurnResult(ok=True, text="x", tokens={}), 1.0)
    live.turn_finished(SPEC_B, TurnResult(ok=True, text="x", tokens={"input": 5}), 1.0)
    live.close()
    rows = {line.split("│")[1].strip(): line for line in out.getvalue().splitlines()
            if line.count("│") > 2 and line.split("│")[1].strip() in ("a", "b")}
    assert "900 tok (+ unknown)" in rows["a"]
    assert "5 tok" in rows["b"] and "unknown" not in rows["b"]
