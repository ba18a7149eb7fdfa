"""The human at a committee's question: told first who was dropped and why, then who is still
in the meeting; the members' words as plain text; ``?`` explaining every choice with an
example; the choices naming how to close the meeting; the progress header as wide as the
terminal."""

from __future__ import annotations

import io
import os
import re

import pytest

from disputatio import app, config, human, progress
from disputatio.cancel import CancelToken
from disputatio.context import RunContext
from disputatio.events import HumanActed
from disputatio.protocols import committee
from disputatio.protocols.base import Ask
from support import sim, write_config

DROP = ("cyd is dropped from the meeting after a failed attempt in round 1 (api_error: "
        "simulated failure: the participant was told to fail).")


def test_the_human_is_told_of_a_drop_before_the_question(home):
    asked: list[Ask] = []
    warned: list[str] = []

    def skips(ask: Ask) -> HumanActed:
        asked.append(ask)
        return HumanActed(key=ask.key, round=ask.round, action="skip")

    path = write_config(home / "d.yaml", [sim("ada", DISPUTATIO_SIM_SPEAKS=1),
                                          sim("bob", DISPUTATIO_SIM_SPEAKS=1),
                                          sim("cyd", DISPUTATIO_SIM_FAIL=1)],
                        protocol={"attempts": 1, "max_rounds": 3})
    cfg, _ = config.load(path)
    out = app.run("Tabs or spaces?", cfg, app.RunOptions(quiet=True, human=True), base=home,
                  protocol="committee", context=RunContext(human=skips, warn=warned.append))
    assert out.code == 0, out.message
    assert [a.key for a in asked] == ["round-1", "round-2"]
    first = asked[0]
    assert first.notes == (DROP, "Still in the meeting: ada and bob.")
    assert first.participants == ("ada", "bob")
    # told at the question, so not again as the next round begins; later questions only
    # say who is still in
    assert DROP not in warned
    assert asked[1].notes == ("Still in the meeting: ada and bob.",)


def test_without_a_human_the_drop_is_a_warning_as_the_next_round_begins(home):
    warned: list[str] = []
    path = write_config(home / "d.yaml", [sim("ada", DISPUTATIO_SIM_SPEAKS=1),
                                          sim("bob", DISPUTATIO_SIM_SPEAKS=1),
                                          sim("cyd", DISPUTATIO_SIM_FAIL=1)],
                        protocol={"attempts": 1})
    cfg, _ = config.load(path)
    app.run("Tabs or spaces?", cfg, app.RunOptions(quiet=True), base=home,
            protocol="committee", context=RunContext(warn=warned.append))
    assert DROP in warned


# --- the terminal face ---------------------------------------------------------------------

CLOSING = Ask("round-1", 1, "Round 1 of at most 8 is over",
              choices=("agree", "skip", "steer", "pick"), participants=("ada", "bob"),
              options=(committee.CLOSE,),
              latest=(("ada", "## Position\n\n**Yes**, with a _plan_: see [the notes]"
                       "(https://example.com/n) and `make bench`.\n\n- measure first\n"
                       "> quoted"), ("bob", "(passes: nothing new to add)")),
              notes=(DROP, "Still in the meeting: ada and bob."))


@pytest.fixture
def face():
    opened: list[int] = []

    def ask(*lines: str, question: Ask = CLOSING) -> tuple[HumanActed | None, str]:
        r, w = os.pipe()
        opened.extend((r, w))
        os.write(w, "".join(f"{line}\n" for line in lines).encode())
        out = io.StringIO()
        got = human.TerminalHuman(CancelToken(), stdin=r, out=out, width=100)(question)
        return got, out.getvalue()

    yield ask
    for fd in opened:
        os.close(fd)


def test_the_drop_is_shown_before_the_contributions(face):
    _, screen = face("k")
    title = screen.index("== Round 1 of at most 8 is over ==")
    assert title < screen.index(f"  ! {DROP}") < screen.index(
        "  ! Still in the meeting: ada and bob.") < screen.index("  1 ada: ")


def test_contributions_are_plain_text(face):
    _, screen = face("k")
    line = next(ln for ln in screen.splitlines() if ln.startswith("  1 ada: "))
    assert line == ("  1 ada: Yes, with a plan: see the notes and make bench. · measure first "
                    "quoted")


@pytest.mark.parametrize("text, shown", [
    ("snake_case_name and 2 * 3 * 4", "snake_case_name and 2 * 3 * 4"),
    ("__strong__ *soft* 1. first", "strong soft 1. first"),
    ("1. first\n2) second", "· first\n· second"),
    ("[bold red]loud[/]", "[bold red]loud[/]"),
    ("# Only a heading\ntext", "text"),
])
def test_plain_takes_markdown_off_and_nothing_else(text, shown):
    assert human.plain(text) == shown


def test_the_choices_name_how_to_close_the_meeting(face):
    got, screen = face("p 1")
    assert "p 1 close the meeting · q stop (resume later) · ? help" in screen
    assert "options:" not in screen and "p N pick" not in screen
    assert got is not None and got.choice == committee.CLOSE


def test_help_explains_every_choice_with_an_example(face):
    _, screen = face("?", "k")
    helped = screen.split("> ", 2)[1]
    for syntax, example in [("a N [S]", "e.g. a 1 3   agree strongly with ada"),
                            ("k", "e.g. k"),
                            ("s TEXT", "e.g. s Weigh"),
                            ("p N", "e.g. p 1   close the meeting"),
                            ("q", "disputatio resume --human"),
                            ("?", "this help")]:
        assert f"    {syntax:<8} " in helped and example in helped, syntax
    assert helped.count("e.g.") == 6


def test_help_shows_only_the_choices_the_question_has(face):
    last = Ask("round-8", 8, "Round 8 of at most 8 is over", choices=("agree", "skip"),
               participants=("ada", "bob"))
    _, screen = face("?", "k", question=last)
    helped = screen.split("> ", 2)[1]
    assert "a N [S]" in helped and "    k " in helped
    assert "steer" not in helped and "p N" not in helped


def test_the_progress_header_is_as_wide_as_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    out = io.StringIO()
    live = progress.LiveProgress(out, force_terminal=True)
    path = "/home/someone/projects/a-long-repository-name/.debate/debate-20261201T101500Z"
    live.header(path, "committee of ada, bob, cyd · at most 8 rounds · no judge")
    live.console.print(live._render())   # an empty table: a resumed debate before its turns
    live.close()
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert (f"{path}  ·  committee of ada, bob, cyd · at most 8 rounds · no judge"
            in shown.splitlines())


def test_help_fits_the_terminal():
    lines = human.help_lines(CLOSING, width=72)
    assert max(len(line) for line in lines) <= 72
    assert sum(line.strip().startswith("e.g.") for line in lines) == 6
