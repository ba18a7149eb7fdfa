"""The terminal face of ``--human`` without a terminal: what a typed line means (``parse``),
the question loop over a pipe (hints, a steer over several lines, end of input, a cancel
that ends the wait), what reaches the screen of the agents' words, the progress table's pause,
and the command line's refusal without a terminal."""

from __future__ import annotations

import io
import os
import sys
import threading

import pytest

from disputatio import cli, human, progress
from disputatio.cancel import CancelToken
from disputatio.events import HumanActed
from disputatio.outcome import UsageError
from disputatio.protocols.base import Ask

ASK = Ask("round-1", 1, "Reaction round 1 is over", participants=("ada", "Bob"),
          latest=(("ada", "## Reaction\n\nKeep it."), ("Bob", "Drop it.")))
PICK = Ask("turn-3", 2, "Who speaks next?", choices=("pick", "skip"),
           options=("wind", "wall", "door"))


def acted(**fields) -> HumanActed:
    return HumanActed(key="round-1", round=1, **fields)


@pytest.mark.parametrize("line, expected", [
    ("a 2", acted(action="agree", participant="Bob", strength=2)),
    ("agree 1 3", acted(action="agree", participant="ada", strength=3)),
    ("A bob 1", acted(action="agree", participant="Bob", strength=1)),
    ("  a   ada  ", acted(action="agree", participant="ada", strength=2)),
    ("k", acted(action="skip")),
    ("skip", acted(action="skip")),
    ("s  Mind the  migration ", acted(action="steer", text="Mind the  migration")),
    ("steer stop\x1b[31m here", acted(action="steer", text="stop here")),
])
def test_a_line_is_the_action_it_names(line, expected):
    assert human.parse(line, ASK) == expected


@pytest.mark.parametrize("line, word", [("s", human.MORE), ("steer  ", human.MORE),
                                        ("?", human.HELP), ("help", human.HELP),
                                        ("q", human.LEAVE), ("quit", human.LEAVE)])
def test_words_that_are_not_actions(line, word):
    assert human.parse(line, ASK) == word


def test_a_pick_names_an_option_by_number_or_name():
    assert human.parse("p 3", PICK).choice == "door"
    assert human.parse("pick Wall", PICK) == HumanActed(key="turn-3", round=2, action="pick",
                                                        choice="wall")


def test_where_a_pick_is_all_there_is_an_option_alone_picks_it():
    assert human.parse("2", PICK).choice == "wall"
    assert human.parse("Door", PICK).choice == "door"
    with pytest.raises(human.Invalid, match="'4' is not a choice"):
        human.parse("4", PICK)
    close = Ask("round-2", 2, "Round 2 is over", choices=("agree", "skip", "steer", "pick"),
                participants=("ada", "bob"), options=("close the meeting",))
    with pytest.raises(human.Invalid, match="'1' is not a choice"):   # agree with 1, or close?
        human.parse("1", close)
    assert human.parse("p 1", close).choice == "close the meeting"


@pytest.mark.parametrize("ask, line, hint", [
    (ASK, "", "type one of: a N [1-3] agree · k skip · s [TEXT] steer"),
    (ASK, "yes", "'yes' is not a choice"),
    (ASK, "a", "which participant? give a number or a name: 1 ada, 2 Bob"),
    (ASK, "a 0", "no participant 0"),
    (ASK, "a 3", "no participant 3; give one of: 1 ada, 2 Bob"),
    (ASK, "a carol", "no participant named 'carol'"),
    (ASK, "a 1 4", "the strength is 1, 2 or 3, not 4"),
    (ASK, "a 1 0", "the strength is 1, 2 or 3, not 0"),
    (ASK, "k now", "skip takes nothing after it"),
    (ASK, "p 1", "pick is not a choice here"),
    (PICK, "a 1", "agree is not a choice here; type one of: p N pick · k skip"),
    (PICK, "p 4", "no option 4; give one of: 1 wind, 2 wall, 3 door"),
    (PICK, "p", "which option?"),
])
def test_what_means_nothing_here_gets_a_one_line_hint(ask, line, hint):
    with pytest.raises(human.Invalid) as caught:
        human.parse(line, ask)
    assert hint in str(caught.value) and "\n" not in str(caught.value)


# --- the question loop, over a pipe ------------------------------------------------------

class Typed:
    """A pipe for the face's stdin; lines are written as a terminal would send them."""

    def __init__(self, *lines: str, end: bool = False):
        self.r, self.w = os.pipe()
        os.write(self.w, "".join(f"{line}\n" for line in lines).encode())
        if end:
            os.close(self.w)
            self.w = -1

    def close(self):
        os.close(self.r)
        if self.w >= 0:
            os.close(self.w)


@pytest.fixture
def typed():
    made: list[Typed] = []

    def make(*lines: str, end: bool = False) -> Typed:
        made.append(Typed(*lines, end=end))
        return made[-1]

    yield make
    for t in made:
        t.close()


class Screen(io.StringIO):
    """What the face shows; ``prompted`` is set once it waits for a line."""

    def __init__(self):
        super().__init__()
        self.prompted = threading.Event()

    def write(self, text: str) -> int:
        n = super().write(text)
        if text == "> ":
            self.prompted.set()
        return n


def ask(typed_in: Typed, question: Ask = ASK, token: CancelToken | None = None,
        out: Screen | None = None):
    out = out or Screen()
    face = human.TerminalHuman(token or CancelToken(), stdin=typed_in.r, out=out, width=60)
    return face(question), out.getvalue()


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_wrong_lines_are_asked_again_until_one_means_something(typed):
    lines = typed("maybe", "a 5", "a 2 3")
    before = open_fds()
    got, screen = ask(lines)
    assert open_fds() == before          # the wake-up pipe is closed with the question
    assert got == acted(action="agree", participant="Bob", strength=3)
    assert screen.count("> ") == 3
    assert "'maybe' is not a choice" in screen and "no participant 5" in screen
    assert "recorded: agree with Bob (strength 3 of 3)" in screen


def test_a_steer_over_several_lines_ends_at_an_empty_one(typed):
    got, screen = ask(typed("s", "first line", "  second line", "", "never read"))
    assert got == acted(action="steer", text="first line\n  second line")
    assert "your steer, ended by an empty line" in screen


def test_an_empty_steer_is_asked_again(typed):
    got, screen = ask(typed("s", "", "k"))
    assert got == acted(action="skip")
    assert "nothing to steer with" in screen


@pytest.mark.parametrize("lines", [(), ("a 1 9",), ("s", "half a steer"), ("q",)])
def test_end_of_input_or_q_leaves(typed, lines):
    got, _ = ask(typed(*lines, end=True))
    assert got is None


def test_help_shows_the_choices_again(typed):
    got, screen = ask(typed("?", "p wind"), PICK)
    assert got.choice == "wind"
    assert screen.count("options: 1 wind, 2 wall, 3 door") == 2


def test_a_cancel_ends_the_wait_for_a_line(typed):
    """Nothing is ever typed: only the cancel can end the question."""
    token = CancelToken()
    quiet = typed()
    before = open_fds()
    result: list = []
    screen = Screen()
    waiting = threading.Thread(target=lambda: result.append(ask(quiet, token=token,
                                                                out=screen)),
                               daemon=True)
    waiting.start()
    assert screen.prompted.wait(timeout=10)
    token.cancel()
    waiting.join(timeout=10)
    assert not waiting.is_alive() and result[0][0] is None
    assert open_fds() == before


def test_a_cancelled_run_asks_nothing(typed):
    token = CancelToken()
    token.cancel()
    got, _ = ask(typed("a 1"), token=token)
    assert got is None


def test_the_agents_words_reach_the_screen_as_plain_text(typed):
    hostile = Ask("round-0", 0, "The proposals\x1b]0;pwned\x07 are in", participants=("ada", "bob"),
                  latest=(("ada", "# Heading\n[bold red]loud[/] \x1b[2J\x9b31m" + "x" * 500),))
    _, screen = ask(typed("k"), hostile)
    assert "\x1b" not in screen and "\x9b" not in screen
    assert "== The proposals are in ==" in screen
    line = next(ln for ln in screen.splitlines() if ln.startswith("  1 ada: "))
    assert line.startswith("  1 ada: [bold red]loud[/] ")      # no heading, no markup read
    assert len(line) <= 2 * 60 and line.endswith("…")
    assert "  agree with: 1 ada, 2 bob" in screen      # bob said nothing this round


def test_speakers_shown_by_their_own_labels_and_whom_to_agree_with(typed):
    """Wind/Wall/Door's end of a round: the turns by role and player, agreement by role."""
    roles = Ask("round-1", 1, "Round 1 is over", participants=("Wind", "Wall", "Door"),
                latest=(("Wind (ada)", "What if we split it?"), ("Wall (bob)", "Yes, but.")))
    got, screen = ask(typed("a wall 1"), roles)
    assert got.participant == "Wall" and got.strength == 1
    assert "  Wind (ada): What if we split it?\n  Wall (bob): Yes, but.\n" in screen
    assert "  agree with: 1 Wind, 2 Wall, 3 Door" in screen


def test_all_speakers_numbered_need_no_list_of_whom_to_agree_with(typed):
    _, screen = ask(typed("k"))
    assert "  1 ada: Keep it.\n  2 Bob: Drop it.\n" in screen
    assert "agree with:" not in screen


# --- the progress table, the terminal check, the command line ------------------------------

def test_the_live_table_stops_while_the_human_is_asked():
    out = io.StringIO()
    view = progress.LiveProgress(out, force_terminal=True)
    try:
        with view.paused():
            assert not view._live.is_started
        assert view._live.is_started
    finally:
        view.close()


def test_human_needs_stdin_and_stderr_on_a_terminal():
    with pytest.raises(UsageError, match="--human needs a terminal"):
        human.refuse_without_terminal(io.StringIO(), io.StringIO())


def main(argv: list[str], monkeypatch, capsys) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["disputatio", *argv])
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    with pytest.raises(SystemExit) as ended:
        cli.main()
    return ended.value.code, capsys.readouterr().err


@pytest.mark.parametrize("argv", [["run", "q", "--demo", "--human"], ["q", "--demo", "--human"],
                                  ["resume", "--human"], ["--resume", "--human"],
                                  ["continue", "yes", "--human"], ["finalize", "--human"]])
def test_human_without_a_terminal_is_refused_before_anything_is_made(argv, home, monkeypatch,
                                                                      capsys):
    code, err = main(argv, monkeypatch, capsys)
    assert code == 2
    assert err == ("error: --human needs a terminal: stdin and stderr must be one (stdout may "
                   "be piped)\n")
    assert not (home / ".debate").exists()


def test_human_with_a_command_that_asks_nothing_is_refused(home, monkeypatch, capsys):
    code, err = main(["--verify", "--human"], monkeypatch, capsys)
    assert code == 2 and err == "error: --human cannot be used with --verify\n"
