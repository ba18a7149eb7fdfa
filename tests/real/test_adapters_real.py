"""Each adapter's own command line, run against the real pinned CLI and the scripted model
server, read back by its own parser: build → transport → parse, nothing faked but the model.

Why: fixtures prove the parsers; only a real run proves the flags (read-only settings, prompt
on stdin, ``-p ""`` for gemini, no ``-p`` for copilot) do what the docstrings claim.
Skips with the reason when the real CLIs cannot be installed here.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from disputatio import adapters
from disputatio.adapters import transport
from disputatio.adapters.base import API_ERROR, AUTH, TIMEOUT, TurnRequest, TurnResult

from .clis import NAMES, cli_setup
from .model_server import Hang, Rule, Status, Text, ToolCall

pytestmark = pytest.mark.real

# the shell or write call each CLI's read-only settings must stop
WRITES = {
    "claude": ToolCall("Bash", {"command": "touch PWNED", "description": "x"}),
    "codex": ToolCall("exec_command", {"cmd": "touch PWNED"}),
    "gemini": ToolCall("write_file", {"file_path": "PWNED", "content": "x"}),
    "copilot": ToolCall("bash", {"command": "touch PWNED", "description": "x"}),
    "pi": ToolCall("bash", {"command": "touch PWNED"}),
}


@pytest.fixture
def bins(real_clis) -> dict[str, Path]:
    return real_clis


@pytest.fixture
def server(model_server):
    return model_server


def turn(name: str, bins: dict, server, tmp_path: Path, git: bool = False,
         timeout: float = 90) -> TurnResult:
    work = tmp_path / "work"
    work.mkdir()
    (work / "hello.txt").write_text("hello-file-content\n")
    if git:
        ident = ["-c", "user.email=t@t", "-c", "user.name=t"]
        for cmd in (["init", "-q"], [*ident, "add", "."], [*ident, "commit", "-qm", "x"]):
            subprocess.run(["git", *cmd], cwd=work, check=True)
        (work / "hello.txt").write_text("changed\n")
    env, extra, model = cli_setup(name, server.url, tmp_path / "home")
    adapter = adapters.get(name)
    request = TurnRequest(prompt="Say hello", bin=str(bins[name]), model=model, timeout_s=timeout,
                          extra_args=tuple(extra), env={**env, "TERM": "dumb"})
    # as the engine runs a turn: under the fence when there is one, writable its checkout and
    # the state dirs its CLI declares
    capture = transport.run(adapter.build(request), work, timeout, tmp_path / "raw", "turn",
                            writable=[work], state=adapter.state_dirs)
    return adapter.parse(capture)


@pytest.mark.parametrize("name", NAMES)
def test_answer(name, bins, server, tmp_path):
    server.script(Rule("Say hello", Text("SCRIPTED_OK")))
    r = turn(name, bins, server, tmp_path)
    assert r.ok and r.text == "SCRIPTED_OK", r
    assert r.session_id, r


@pytest.mark.parametrize("name", NAMES)
def test_401_is_auth(name, bins, server, tmp_path):
    server.script(Rule(None, Status(401, "scripted-401")))
    r = turn(name, bins, server, tmp_path)
    assert r.failure == AUTH, r


@pytest.mark.parametrize("name", NAMES)
def test_500_is_api_error(name, bins, server, tmp_path):
    server.script(Rule(None, Status(500, "scripted-500")))
    r = turn(name, bins, server, tmp_path)
    assert r.failure == API_ERROR, r


@pytest.mark.parametrize("name", NAMES)
def test_a_model_that_never_answers_is_a_timeout(name, bins, server, tmp_path):
    server.script(Rule(None, Hang()))
    r = turn(name, bins, server, tmp_path, timeout=10)
    assert r.failure == TIMEOUT, r


@pytest.mark.parametrize("name", NAMES)
def test_writes_are_stopped(name, bins, server, tmp_path):
    server.script(Rule("Say hello", WRITES[name]), Rule(None, Text("DONE")))
    r = turn(name, bins, server, tmp_path)
    assert r.ok, r
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["hello.txt"]


@pytest.mark.parametrize("command, runs", [
    ("git diff", True), ("python3 -m pytest --version", True),
    ("git diff --output=PWNED", False), ("git diff && touch PWNED", False), ("rm hello.txt", False),
])
def test_claude_runs_only_read_only_bash(command, runs, bins, server, tmp_path):
    server.script(Rule("Say hello", ToolCall("Bash", {"command": command, "description": "x"})),
                  Rule(None, Text("DONE")))
    r = turn("claude", bins, server, tmp_path, git=True)
    assert r.ok and r.evidence["denied"] == (0 if runs else 1), r
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == [".git", "hello.txt"]
