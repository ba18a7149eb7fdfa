"""The human in the loop at a terminal (``--human``): a protocol's question (``Ask``) shown on
stderr, the answer read from stdin, the action returned as the ``HumanActed`` event to record.

Plain text only: what agents said reaches the terminal through ``sanitize`` (no escape can drive
it) and is never read as markup. The wait for a line is a ``select`` on the terminal and on a
pipe the run's cancel token writes to, so Ctrl-C (which the CLI turns into a cancel) ends the
question at once; so do Ctrl-D and ``q``. Then the face answers None: the debate stops as
interrupted and ``disputatio resume --human`` asks again.

While it waits, the question is also published in the debate's folder (``human_channel``), so
``disputatio watch --human`` can answer it from a browser: the wait then also looks for an
answer file every ``POLL_S``, and whichever answer comes first is the one recorded.

What the human types (``parse``), one line:

- ``a N [S]`` / ``agree N [S]``: agree with participant N (its number or name), strength S of
  1-3 (default 2)
- ``s TEXT`` / ``steer TEXT``: steer everyone's next turn; ``s`` alone: the text follows on the
  next lines, ended by an empty line
- ``k`` / ``skip``; ``p N`` / ``pick N`` (or N alone): pick option N (number or name);
  ``?``: every choice explained, with an example; ``q``: stop here (as Ctrl-D)

What agents said is shown as plain text, two lines each, after ``Ask.notes`` (a member dropped).
"""

from __future__ import annotations

import os
import re
import select
import sys
import textwrap
import threading
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TextIO

from disputatio.cancel import CancelToken
from disputatio.events import HumanActed
from disputatio.human_channel import POLL_S, Channel
from disputatio.outcome import UsageError
from disputatio.protocols.base import Ask
from disputatio.text import one_line, sanitize

DEFAULT_STRENGTH = 2
MORE, LEAVE, HELP = "more", "leave", "help"   # what a line may ask for besides an action
_WORDS = {"a": "agree", "agree": "agree", "s": "steer", "steer": "steer", "k": "skip",
          "skip": "skip", "p": "pick", "pick": "pick"}
_SYNTAX = {"agree": "a N [1-3]", "steer": "s [TEXT]", "skip": "k", "pick": "p N"}


class Invalid(ValueError):
    """The line means nothing here; the message is the one-line hint that says what would."""


def refuse_without_terminal(stdin: TextIO | None = None, stderr: TextIO | None = None) -> None:
    """``--human`` asks on stderr and reads the answer from stdin: both must be a terminal.
    stdout may be piped, as it carries only the artifact's path."""
    stdin, stderr = stdin or sys.stdin, stderr or sys.stderr
    if not (_isatty(stdin) and _isatty(stderr)):
        raise UsageError("--human needs a terminal: stdin and stderr must be one (stdout may "
                         "be piped)")


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


# --- what a line means ----------------------------------------------------------------------

def choices_line(ask: Ask) -> str:
    """The choices of ``ask`` as one line of syntax; a pick of the only option names it
    (``p 1 close the meeting``)."""
    said = [f"p 1 {one_line(ask.options[0], 40)}" if c == "pick" and len(ask.options) == 1
            else f"{_SYNTAX[c]} {c}" for c in ask.choices if c in _SYNTAX]
    return " · ".join([*said, "q stop (resume later)", "? help"])


def help_lines(ask: Ask, width: int = 100) -> list[str]:
    """Every choice of ``ask``: its syntax, what it does (wrapped to ``width``), and an example
    with this question's own names."""
    who = ask.participants[0] if ask.participants else "ada"
    rows: list[tuple[str, str, str]] = []
    if "agree" in ask.choices:
        rows.append(("a N [S]", "agree with participant N (its number or name) at strength S: "
                     "1 leaning, 2 agreeing (the default), 3 strongly",
                     f"a 1 3   agree strongly with {who}"))
    if "skip" in ask.choices:
        rows.append(("k", "skip: nothing to add; the debate goes on as it would", "k"))
    if "steer" in ask.choices:
        rows.append(("s TEXT", "steer: TEXT is told to everyone's next turn (and the judge); "
                     "s alone takes several lines, ended by an empty one",
                     "s Weigh the migration's cost before its speed"))
    if "pick" in ask.choices and ask.options:
        alone = " (or N alone)" if "agree" not in ask.choices else ""
        rows.append(("p N", f"pick option N by its number or name{alone}: "
                     + ", ".join(f"{i} {one_line(o, 40)}" for i, o in
                                 enumerate(ask.options, 1)),
                     f"p 1   {one_line(ask.options[0], 40)}"))
    rows.append(("q", "stop here; the debate is kept, and disputatio resume --human asks "
                 "this again", "q"))
    rows.append(("?", "this help", "?"))
    lines = ["  what you can type:"]
    hang = " " * 13
    for syntax, what, example in rows:
        said = textwrap.wrap(what, max(30, width - len(hang) - 1))
        lines += [f"    {syntax:<8} {said[0]}", *(hang + more for more in said[1:]),
                  f"{hang}e.g. {example}"]
    return lines


def parse(line: str, ask: Ask) -> HumanActed | str:
    """One line of the human's: the action to record, or ``MORE`` (a steer whose text follows),
    ``LEAVE``, ``HELP``. Raises ``Invalid`` with a hint when the line is none of these."""
    words = sanitize(line).split()
    if not words:
        raise Invalid(f"type one of: {choices_line(ask)}")
    head, rest = words[0].lower(), words[1:]
    if head in ("?", "h", "help"):
        return HELP
    if head in ("q", "quit"):
        return LEAVE
    action = _WORDS.get(head)
    if action is None and "pick" in ask.choices and "agree" not in ask.choices:
        # where a pick is all there is to do, an option's number or name alone picks it
        try:
            return HumanActed(key=ask.key, round=ask.round, action="pick",
                              choice=_one_of(" ".join(words), ask.options, "option"))
        except Invalid:
            pass
    if action is None:
        raise Invalid(f"{one_line(words[0], 20)!r} is not a choice; type one of: "
                      f"{choices_line(ask)}")
    if action not in ask.choices:
        raise Invalid(f"{action} is not a choice here; type one of: {choices_line(ask)}")
    acted = {"key": ask.key, "round": ask.round, "action": action}
    if action == "skip":
        if rest:
            raise Invalid("skip takes nothing after it")
        return HumanActed(**acted)
    if action == "steer":
        text = sanitize(line).strip().split(None, 1)
        return HumanActed(**acted, text=text[1].strip()) if len(text) > 1 else MORE
    if action == "pick":
        return HumanActed(**acted, choice=_one_of(" ".join(rest), ask.options, "option"))
    strength = DEFAULT_STRENGTH
    if len(rest) > 1 and rest[-1].isdigit():
        strength = int(rest[-1])
        rest = rest[:-1]
        if not 1 <= strength <= 3:
            raise Invalid(f"the strength is 1, 2 or 3, not {strength}")
    who = _one_of(" ".join(rest), ask.participants, "participant")
    return HumanActed(**acted, participant=who, strength=strength)


def _one_of(said: str, names: tuple[str, ...], what: str) -> str:
    """The name ``said`` means: a number from 1, or a name (case does not matter)."""
    listing = ", ".join(f"{i} {n}" for i, n in enumerate(names, 1))
    if not said:
        raise Invalid(f"which {what}? give a number or a name: {listing}")
    if said.isdigit():
        if 1 <= int(said) <= len(names):
            return names[int(said) - 1]
        raise Invalid(f"no {what} {said}; give one of: {listing}")
    found = [n for n in names if n.lower() == said.lower()]
    if len(found) != 1:
        raise Invalid(f"no {what} named {one_line(said, 40)!r}; give one of: {listing}")
    return found[0]


def said(acted: HumanActed) -> str:
    """What was recorded, as the confirmation line says it."""
    if acted.action == "agree":
        return f"agree with {acted.participant} (strength {acted.strength} of 3)"
    if acted.action == "steer":
        return f"steer: {one_line(acted.text, 60)}"
    if acted.action == "pick":
        return f"pick {acted.choice}"
    return "skip"


# --- the terminal ---------------------------------------------------------------------------

class TerminalHuman:
    """A ``RunContext.human`` that asks at the terminal; None when the human leaves."""

    def __init__(self, cancel: CancelToken, stdin: int | None = None,
                 out: TextIO | None = None, width: int | None = None,
                 folder: Callable[[], Path | None] | None = None):
        self.cancel = cancel
        self._fd = stdin
        self._out = out
        self._width = width
        self._folder = folder   # the debate's folder, where the question is published

    def __call__(self, ask: Ask) -> HumanActed | None:
        fd = sys.stdin.fileno() if self._fd is None else self._fd
        out = self._out or sys.stderr
        _discard_typeahead(fd)   # keys pressed while agents worked are not an answer
        self._show(ask, out)
        where = self._folder() if self._folder is not None else None
        with ExitStack() as stack:
            channel = None
            if where is not None:
                try:
                    channel = stack.enter_context(Channel(where, ask))
                except OSError as exc:   # a folder we cannot write: the terminal still asks
                    out.write(f"  (not offered to a viewer: {exc.strerror or exc})\n")
            lines = stack.enter_context(_Lines(fd, self.cancel,
                                               channel.poll if channel else None))
            try:
                return self._ask(ask, lines, out)
            except _Answered as got:
                out.write(f"\n  answered in the browser, recorded: {said(got.acted)} (anything "
                          "typed here for this question is ignored)\n")
                out.flush()
                return got.acted

    def _ask(self, ask: Ask, lines: _Lines, out: TextIO) -> HumanActed | None:
        """Ask until a line means an action (or the human leaves)."""
        while True:
            out.write("> ")
            out.flush()
            line = lines.next()
            try:
                got = parse(line, ask) if line is not None else LEAVE
                if got == MORE:
                    got = self._steer(ask, lines, out)
            except Invalid as exc:
                out.write(f"  {exc}\n")
                continue
            if got == HELP:
                out.write("\n".join(help_lines(ask, self._width or _columns(out))) + "\n")
                self._menu(ask, out)
                continue
            if not isinstance(got, HumanActed):   # LEAVE, or gone while steering
                out.write("\n")
                out.flush()
                return None
            out.write(f"  recorded: {said(got)}\n")
            out.flush()
            return got

    def _steer(self, ask: Ask, lines: _Lines, out: TextIO) -> HumanActed | str:
        """A steer over several lines, ended by an empty one."""
        out.write("  your steer, ended by an empty line:\n")
        text: list[str] = []
        while True:
            out.write("| ")
            out.flush()
            line = lines.next()
            if line is None:
                return LEAVE
            if not line.strip():
                break
            text.append(line.rstrip())
        if not text:
            raise Invalid("nothing to steer with; type s TEXT, or s and then the lines")
        return HumanActed(key=ask.key, round=ask.round, action="steer", text="\n".join(text))

    def _show(self, ask: Ask, out: TextIO) -> None:
        """The title, what was said (numbered where the speaker may be agreed with), and whom
        one may agree with when that list is not already in the numbers shown."""
        out.write(f"\n== {one_line(ask.title, 120)} ==\n")
        for note in ask.notes:
            out.write(f"  ! {one_line(note, 400)}\n")
        numbers = {name: i for i, name in enumerate(ask.participants, 1)}
        width = self._width or _columns(out)
        for who, text in ask.latest:
            n = numbers.get(who)
            out.write(_gist(f"  {n} {who}: " if n else f"  {who}: ", text, width))
        if "agree" in ask.choices and set(numbers) - {who for who, _ in ask.latest}:
            out.write("  agree with: " + ", ".join(f"{i} {one_line(p, 40)}"
                                                   for p, i in numbers.items()) + "\n")
        self._menu(ask, out)

    def _menu(self, ask: Ask, out: TextIO) -> None:
        if "pick" in ask.choices and len(ask.options) > 1:   # one is named in the choices
            out.write("  options: " + ", ".join(f"{i} {one_line(o, 40)}" for i, o in
                                                enumerate(ask.options, 1)) + "\n")
        out.write(f"  {choices_line(ask)}\n")
        out.flush()


def _gist(prefix: str, text: str, width: int) -> str:
    """One contribution in at most two terminal lines, as plain text (``plain``)."""
    prefix = sanitize(prefix)
    return prefix + one_line(plain(text), max(40, 2 * width - len(prefix) - 1)) + "\n"


_HEADING = re.compile(r"^\s*#{1,6}(\s|$)")
_QUOTED = re.compile(r"^\s*(>\s?)+")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_CODE = re.compile(r"`+([^`\n]*)`+")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])([*_])(?=\S)([^*_\n]+?)(?<=\S)\1(?![\w*])")


def plain(text: str) -> str:
    """Markdown as a reader of plain text wants it: headings left out, quote marks, emphasis,
    code ticks and link targets taken off, a list item marked ``·``. Nothing is read as
    markup: ``sanitize`` first, so no escape reaches the terminal."""
    lines = []
    for line in sanitize(text).split("\n"):
        if _HEADING.match(line):
            continue
        line = _QUOTED.sub("", line)
        line = _ITEM.sub("· ", line)
        line = _LINK.sub(r"\1", line)
        line = _CODE.sub(r"\1", line)
        line = _STRONG.sub(r"\2", line)
        lines.append(_EMPHASIS.sub(r"\2", line))
    return "\n".join(lines)


def _columns(out: TextIO) -> int:
    try:
        return os.get_terminal_size(out.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 80


def _discard_typeahead(fd: int) -> None:
    try:
        import termios

        if os.isatty(fd):
            termios.tcflush(fd, termios.TCIFLUSH)
    except (ImportError, OSError):
        pass


class _Answered(Exception):
    """An answer came from elsewhere (the viewer) while the terminal waited for a line."""

    def __init__(self, acted: HumanActed):
        super().__init__(acted.action)
        self.acted = acted


class _Lines:
    """Lines from ``fd`` until end of input or a cancel of ``token``: ``select`` waits on the
    terminal and on a pipe the token's hook writes to, so no read blocks past a cancel. With
    ``poll``, the wait wakes every ``POLL_S`` to ask it for an answer given elsewhere, and
    raises ``_Answered`` with the first one."""

    def __init__(self, fd: int, token: CancelToken,
                 poll: Callable[[], HumanActed | None] | None = None):
        self.fd = fd
        self.token = token
        self.poll = poll
        self._buffer = b""
        self._eof = False

    def __enter__(self) -> _Lines:
        self._wake_r, self._wake_w = os.pipe()
        self._open = True
        self._lock = threading.Lock()
        self._unhook = self.token.on_cancel(self._wake)
        return self

    def __exit__(self, *exc) -> None:
        self._unhook()
        with self._lock:
            self._open = False
            os.close(self._wake_r)
            os.close(self._wake_w)

    def _wake(self) -> None:
        # never blocks: a cancel (run from a signal handler on this very thread) that finds
        # the pipe being closed has nothing left to wake
        if self._lock.acquire(blocking=False):
            try:
                if self._open:
                    os.write(self._wake_w, b"!")
            finally:
                self._lock.release()

    def next(self) -> str | None:
        """The next line without its break, or None: end of input, or cancelled."""
        while b"\n" not in self._buffer:
            if self._eof or self.token.cancelled:
                return None
            if self.poll is not None and (acted := self.poll()) is not None:
                raise _Answered(acted)
            ready, _, _ = select.select([self.fd, self._wake_r], [], [],
                                        POLL_S if self.poll is not None else None)
            if not ready:
                continue
            if self._wake_r in ready or self.token.cancelled:
                return None
            chunk = os.read(self.fd, 4096)
            self._eof = not chunk
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode("utf-8", errors="replace").rstrip("\r")
