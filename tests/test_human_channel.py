"""The open question shared through the debate's folder: published while the face waits, answered
by a file that only one answer can become, the first answer taken (the terminal's or the file's),
and nothing left in the folder once the question is over, answered or cancelled."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from disputatio import human, human_channel
from disputatio.cancel import CancelToken
from disputatio.events import HumanActed
from disputatio.protocols.base import Ask

ASK = Ask("round-1", 1, "Reaction round 1 is over", participants=("ada", "bob"),
          latest=(("ada", "Ship it."),))
PICK = Ask("pick-2", 1, "Who speaks at turn 2?", choices=("pick",),
           options=("Wind", "Wall", "Door"))


def test_the_question_is_published_whole_and_removed_with_the_channel(tmp_path):
    with human_channel.Channel(tmp_path, ASK):
        names = os.listdir(tmp_path / "human")
        assert names == ["ask.json"]          # no temporary file left beside it
        assert human_channel.open_question(tmp_path) == {
            "key": "round-1", "round": 1, "title": "Reaction round 1 is over",
            "choices": ["agree", "skip", "steer"], "participants": ["ada", "bob"],
            "options": [], "notes": []}
    assert not (tmp_path / "human").exists()
    assert human_channel.open_question(tmp_path) is None


def test_an_answer_delivered_is_the_one_the_channel_takes(tmp_path):
    with human_channel.Channel(tmp_path, ASK) as channel:
        assert channel.poll() is None
        got = human_channel.deliver(tmp_path, {"key": "round-1", "action": "agree",
                                               "participant": "bob", "strength": 3})
        assert got == {"key": "round-1", "round": 1, "action": "agree", "participant": "bob",
                       "strength": 3}
        assert json.loads((tmp_path / "human" / "answer-round-1.json").read_text()) == got
        assert channel.poll() == HumanActed(key="round-1", round=1, action="agree",
                                            participant="bob", strength=3)
    assert not (tmp_path / "human").exists()


def test_only_the_first_answer_lands(tmp_path):
    with human_channel.Channel(tmp_path, ASK) as channel:
        human_channel.deliver(tmp_path, {"key": "round-1", "action": "skip"})
        with pytest.raises(human_channel.Closed, match="has an answer already"):
            human_channel.deliver(tmp_path, {"key": "round-1", "action": "steer",
                                             "text": "no"})
        assert channel.poll().action == "skip"
        assert sorted(os.listdir(tmp_path / "human")) == ["answer-round-1.json", "ask.json"]


@pytest.mark.parametrize("answer, error, says", [
    ({"key": "round-0", "action": "skip"}, human_channel.Closed, "no open question 'round-0'"),
    ({"key": "round-1", "action": "pick", "choice": "x"}, human_channel.Invalid,
     "action must be one of: agree, skip, steer"),
    ({"key": "round-1", "action": "agree", "participant": "cy"}, human_channel.Invalid,
     "participant must be one of: ada, bob"),
    ({"key": "round-1", "action": "agree", "participant": "ada", "strength": 4},
     human_channel.Invalid, "strength must be 1, 2 or 3"),
    ({"key": "round-1", "action": "agree", "participant": "ada", "strength": True},
     human_channel.Invalid, "strength must be 1, 2 or 3"),
    ({"key": "round-1", "action": "steer", "text": " \x1b[2J "}, human_channel.Invalid,
     "a steer needs text"),
    (["round-1", "skip"], human_channel.Invalid, "a JSON object"),
])
def test_a_stale_or_invalid_answer_is_refused_and_writes_nothing(tmp_path, answer, error, says):
    with human_channel.Channel(tmp_path, ASK):
        with pytest.raises(error, match=says):
            human_channel.deliver(tmp_path, answer)
        assert os.listdir(tmp_path / "human") == ["ask.json"]


def test_a_pick_names_one_of_the_options(tmp_path):
    with human_channel.Channel(tmp_path, PICK) as channel:
        with pytest.raises(human_channel.Invalid, match="choice must be one of: Wind, Wall"):
            human_channel.deliver(tmp_path, {"key": "pick-2", "action": "pick",
                                             "choice": "wind"})
        human_channel.deliver(tmp_path, {"key": "pick-2", "action": "pick", "choice": "Wall"})
        assert channel.poll() == HumanActed(key="pick-2", round=1, action="pick",
                                            choice="Wall")


def test_no_answer_lands_once_the_question_is_closed(tmp_path):
    with human_channel.Channel(tmp_path, ASK):
        pass
    with pytest.raises(human_channel.Closed, match="no question is open"):
        human_channel.deliver(tmp_path, {"key": "round-1", "action": "skip"})
    assert not (tmp_path / "human").exists()   # only the debate makes the folder


def test_a_file_that_is_no_answer_is_not_taken(tmp_path):
    """The face trusts no file: one written by hand, not through deliver, is checked too."""
    with human_channel.Channel(tmp_path, ASK) as channel:
        (tmp_path / "human" / "answer-round-1.json").write_text(
            json.dumps({"key": "round-1", "action": "agree", "participant": "mallory"}))
        assert channel.poll() is None
        assert os.listdir(tmp_path / "human") == ["ask.json"]


def test_what_a_killed_run_left_is_swept_before_the_next_question(tmp_path):
    (tmp_path / "human").mkdir()
    (tmp_path / "human" / "answer-round-1.json").write_text(
        json.dumps({"key": "round-1", "action": "skip"}))
    (tmp_path / "human" / "ask.json").write_text("{}")
    with human_channel.Channel(tmp_path, ASK) as channel:
        assert channel.poll() is None          # an old answer is no answer to this question
    assert not (tmp_path / "human").exists()


# --- the face: terminal or file, whichever comes first --------------------------------------

class Face:
    """A TerminalHuman on a pipe, asked in a thread; ``result`` once it returns."""

    def __init__(self, folder, ask: Ask = ASK, token: CancelToken | None = None):
        self.r, self.w = os.pipe()
        self.token = token or CancelToken()
        self.out = _Screen()
        self.face = human.TerminalHuman(self.token, stdin=self.r, out=self.out, width=80,
                                        folder=lambda: folder)
        self.result: list = []
        self.thread = threading.Thread(target=lambda: self.result.append(self.face(ask)),
                                       daemon=True)

    def __enter__(self) -> Face:
        self.thread.start()
        assert self.out.prompted.wait(10), "the face never asked"
        return self

    def __exit__(self, *exc) -> None:
        self.thread.join(10)
        os.close(self.r)
        os.close(self.w)

    def answer(self, timeout: float = 5.0):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the face is still waiting"
        return self.result[0]


class _Screen:
    def __init__(self):
        self.text = ""
        self.prompted = threading.Event()

    def write(self, text: str) -> int:
        self.text += text
        if text == "> ":
            self.prompted.set()
        return len(text)

    def flush(self) -> None:
        pass


def test_an_answer_from_the_viewer_ends_the_wait_at_the_terminal(tmp_path):
    with Face(tmp_path) as face:
        assert human_channel.open_question(tmp_path)["key"] == "round-1"
        human_channel.deliver(tmp_path, {"key": "round-1", "action": "steer",
                                         "text": "Mind the rollback"})
        started = time.monotonic()
        got = face.answer()
        assert time.monotonic() - started < 2.0
    assert got == HumanActed(key="round-1", round=1, action="steer", text="Mind the rollback")
    assert "answered in the browser, recorded: steer: Mind the rollback" in face.out.text
    assert "ignored" in face.out.text
    assert not (tmp_path / "human").exists()


def test_a_line_typed_first_wins_and_closes_the_question(tmp_path):
    with Face(tmp_path) as face:
        os.write(face.w, b"a bob 1\n")
        got = face.answer()
        with pytest.raises(human_channel.Closed):
            human_channel.deliver(tmp_path, {"key": "round-1", "action": "skip"})
    assert got == HumanActed(key="round-1", round=1, action="agree", participant="bob",
                             strength=1)
    assert "browser" not in face.out.text
    assert not (tmp_path / "human").exists()


def test_a_cancel_ends_the_wait_and_leaves_nothing(tmp_path):
    before = set(os.listdir("/proc/self/fd"))
    with Face(tmp_path) as face:
        face.token.cancel()
        started = time.monotonic()
        assert face.answer() is None
        assert time.monotonic() - started < 1.0
    assert not (tmp_path / "human").exists()
    assert set(os.listdir("/proc/self/fd")) == before


def test_without_a_folder_the_face_asks_only_at_the_terminal(tmp_path):
    r, w = os.pipe()
    try:
        os.write(w, b"k\n")
        face = human.TerminalHuman(CancelToken(), stdin=r, out=_Screen(), width=80)
        assert face(ASK) == HumanActed(key="round-1", round=1, action="skip")
    finally:
        os.close(r)
        os.close(w)
    assert list(tmp_path.iterdir()) == []


def test_a_question_whose_process_is_gone_is_not_open(tmp_path):
    """A run killed with -9 leaves its question behind: nothing may answer it."""
    import subprocess
    import sys

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    with human_channel.Channel(tmp_path, ASK):
        path = tmp_path / "human" / "ask.json"
        left = json.loads(path.read_text())
        assert left["waiting"]["pid"] == os.getpid()
        path.write_text(json.dumps({**left, "waiting": {"pid": int(gone.stdout),
                                                        "started": "1"}}))
        assert human_channel.open_question(tmp_path) is None
        with pytest.raises(human_channel.Closed, match="no question is open"):
            human_channel.deliver(tmp_path, {"key": "round-1", "action": "skip"})


def test_the_questions_notes_are_published_as_plain_text(tmp_path):
    told = Ask("round-1", 1, "Round 1 is over", participants=("ada",),
               notes=("cyd is dropped\x1b[2J from the meeting.",))
    with human_channel.Channel(tmp_path, told):
        assert human_channel.open_question(tmp_path)["notes"] == [
            "cyd is dropped from the meeting."]
