"""The human in the loop's open question, shared through the debate's folder so that a viewer
(``disputatio watch --human``, another process) can answer it as well as the terminal.

While the debate waits, ``human/ask.json`` holds the question (written whole by a rename, so a
reader never sees half of it); an answer is ``human/answer-<key>.json``, put in place by a hard
link, which fails when one is already there, so two answers can never both land. The debate's
face takes the first answer it sees, from the terminal or from that file, and then removes the
folder: nothing of it outlives the question. Only the face creates ``human/``; a late writer finds
it gone and is told the question is closed.

Both sides validate an answer against the published question (``check``): the face trusts no
file, the viewer refuses what the face would. The question names the process that waits on it,
so a question left by a run killed with -9 is not offered.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any

from disputatio import procs
from disputatio.events import HumanActed
from disputatio.protocols.base import Ask
from disputatio.text import sanitize

DIR = "human"
ASK = "ask.json"
POLL_S = 0.2            # how often a waiting face looks for an answer file
MAX_TEXT = 20_000       # the longest steer taken from a file (a terminal types far less)
ACTIONS = ("agree", "skip", "steer", "pick")


class Invalid(ValueError):
    """The answer is not one the question allows; the message says why, in one line."""


class Closed(Exception):
    """No open question with that key: it was answered, or the debate moved on."""


def question(ask: Ask) -> dict[str, Any]:
    """The question as published: what a viewer needs to offer the same choices."""
    return {"key": ask.key, "round": ask.round, "title": sanitize(ask.title),
            "choices": list(ask.choices), "participants": list(ask.participants),
            "options": list(ask.options), "notes": [sanitize(n) for n in ask.notes]}


def check(asked: dict[str, Any], answer: Any) -> dict[str, Any]:
    """The fields of the ``HumanActed`` that ``answer`` (a decoded JSON object) means for the
    question ``asked``; ``Closed`` when it answers another question, ``Invalid`` otherwise."""
    if not isinstance(answer, dict):
        raise Invalid("the answer is a JSON object")
    if answer.get("key") != asked["key"]:
        raise Closed(f"no open question {str(answer.get('key'))[:80]!r}")
    action = answer.get("action")
    if action not in asked["choices"]:
        raise Invalid(f"action must be one of: {', '.join(asked['choices'])}")
    acted: dict[str, Any] = {"key": asked["key"], "round": asked["round"], "action": action}
    if action == "agree":
        who, strength = answer.get("participant"), answer.get("strength", 2)
        if who not in asked["participants"]:
            raise Invalid(f"participant must be one of: {', '.join(asked['participants'])}")
        if type(strength) is not int or not 1 <= strength <= 3:
            raise Invalid("strength must be 1, 2 or 3")
        acted.update(participant=who, strength=strength)
    elif action == "pick":
        if answer.get("choice") not in asked["options"]:
            raise Invalid(f"choice must be one of: {', '.join(asked['options'])}")
        acted["choice"] = answer["choice"]
    elif action == "steer":
        text = answer.get("text")
        text = sanitize(text).strip() if isinstance(text, str) else ""
        if not text or len(text) > MAX_TEXT:
            raise Invalid(f"a steer needs text, at most {MAX_TEXT} characters")
        acted["text"] = text
    return acted


def _answer_name(key: str) -> str:
    safe = key if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", key) else \
        hashlib.sha256(key.encode()).hexdigest()[:32]
    return f"answer-{safe}.json"


# --- the debate's side ----------------------------------------------------------------------

class Channel:
    """The open question of one debate, published while the face waits (a context manager).
    ``poll`` is the answer from a file, once one has landed."""

    def __init__(self, debate_dir: Path, ask: Ask):
        self.dir = debate_dir / DIR
        self.ask = ask
        self.asked = question(ask)

    def __enter__(self) -> Channel:
        close(self.dir.parent)         # what a killed run may have left
        self.dir.mkdir(exist_ok=True)
        waiting = {"pid": os.getpid(), "started": procs.process_start(os.getpid())}
        _write_whole(self.dir / ASK, json.dumps({**self.asked, "waiting": waiting},
                                                ensure_ascii=False).encode())
        return self

    def __exit__(self, *exc) -> None:
        with contextlib.suppress(OSError):   # a folder we cannot tidy must not end the debate
            close(self.dir.parent)

    def poll(self) -> HumanActed | None:
        path = self.dir / _answer_name(self.ask.key)
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        try:
            return HumanActed(**check(self.asked, json.loads(raw)))
        except (ValueError, Closed):   # not an answer to this question: not ours to take
            with contextlib.suppress(OSError):
                path.unlink()
            return None


def close(debate_dir: Path) -> None:
    """Remove the question and everything written beside it. The question goes first, so no
    new answer is accepted; one being written meanwhile is found by the next sweep."""
    folder = debate_dir / DIR
    for _ in range(50):
        with contextlib.suppress(FileNotFoundError):
            (folder / ASK).unlink()
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            return
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                (folder / name).unlink()
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.ENOTEMPTY:
                raise


def _write_whole(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


# --- the viewer's side ----------------------------------------------------------------------

def open_question(debate_dir: Path) -> dict[str, Any] | None:
    """The question the debate is waiting on, or None (none, or its process is gone)."""
    try:
        asked = json.loads((debate_dir / DIR / ASK).read_bytes())
        waiting = asked.pop("waiting")
        alive = procs.process_start(int(waiting["pid"])) == waiting["started"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return asked if alive and isinstance(asked.get("key"), str) else None


def deliver(debate_dir: Path, answer: Any) -> dict[str, Any]:
    """Hand ``answer`` to the waiting debate; the checked fields. ``Closed`` when no question
    with its key is open or another answer landed first; ``Invalid`` when it is no answer."""
    asked = open_question(debate_dir)
    if asked is None:
        raise Closed("no question is open")
    acted = check(asked, answer)
    folder = debate_dir / DIR
    final = folder / _answer_name(asked["key"])
    tmp = folder / f".{final.name}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileNotFoundError:   # the face has closed the question and its folder
        raise Closed("the question was answered meanwhile") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(json.dumps(acted, ensure_ascii=False).encode())
        os.link(tmp, final)
    except FileExistsError:
        raise Closed("the question has an answer already") from None
    except FileNotFoundError:
        raise Closed("the question was answered meanwhile") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    still = open_question(debate_dir)
    if still is None or still.get("key") != asked["key"]:
        # closed while we wrote: take our file back unless the face took it first
        try:
            final.unlink()
        except FileNotFoundError:
            return acted
        raise Closed("the question was answered meanwhile")
    return acted
