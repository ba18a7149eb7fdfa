"""The scripted model server and ``cli_setup`` against each real CLI binary, run directly.

Why: before disputatio's adapters are trusted with a real CLI, the harness itself must be shown
to work with that CLI: a scripted answer arrives, a scripted 401 surfaces as a visible failure,
a scripted tool call round-trips, and a scripted write is stopped by the read-only flags each
adapter is expected to use (the headless command lines recorded in research/real-clis.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.real_tier import read_call

from .clis import NAMES, STUB_KEY, cli_setup
from .model_server import Hang, Rule, ScriptedModelServer, Status, Text, ToolCall

pytestmark = pytest.mark.real

RUN_TIMEOUT_S = 120
FILE_CONTENT = "hello-file-content"


def headless_argv(name: str, bin_path: Path, model: str | None, extra: list[str],
                  prompt: str) -> list[str]:
    """The recommended headless, read-only command line for each CLI (research/real-clis.md)."""
    b = str(bin_path)
    m = [model] if model else []
    if name == "claude":
        return [b, "-p", "--output-format", "json", *(["--model", *m] if m else []),
                "--tools", "Read,Grep,Glob", "--permission-mode", "dontAsk",
                "--strict-mcp-config", "--mcp-config", '{"mcpServers":{}}',
                "--setting-sources", "", "--no-session-persistence", *extra, prompt]
    if name == "codex":
        return [b, "exec", "--json", "--skip-git-repo-check", "--ephemeral",
                "--sandbox", "read-only", "--ignore-user-config", "--ignore-rules",
                *(["-m", *m] if m else []), *extra, prompt]
    if name == "gemini":
        return [b, "-p", prompt, "-o", "json", *(["-m", *m] if m else []),
                "--approval-mode", "plan", *extra]
    if name == "copilot":
        return [b, "-p", prompt, "--output-format", "json",
                "--available-tools=view,rg,grep,glob", "--allow-all-tools",
                *(["--model", *m] if m else []), "--disable-builtin-mcps",
                "--no-custom-instructions", "--no-ask-user", "--no-auto-update", *extra]
    if name == "pi":
        return [b, "-p", "--mode", "json", "--no-session", *(["--model", *m] if m else []),
                "--tools", "read,grep,find,ls", "--no-extensions", "--no-skills",
                "--no-prompt-templates", "--no-context-files", *extra, prompt]
    raise ValueError(name)


# A write the read-only flags must stop, in each CLI's own shell/write tool.
WRITE_CALLS = {
    "claude": ToolCall("Bash", {"command": "touch PWNED", "description": "create a file"}),
    "codex": ToolCall("exec_command", {"cmd": "touch PWNED"}),
    "gemini": ToolCall("write_file", {"file_path": "PWNED", "content": "x"}),
    "copilot": ToolCall("bash", {"command": "touch PWNED", "description": "create a file"}),
    "pi": ToolCall("bash", {"command": "touch PWNED"}),
}


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + "\n" + self.stderr


def run_cli(name: str, bins: dict[str, Path], server: ScriptedModelServer, tmp_path: Path,
            prompt: str = "Say hello") -> Run:
    """Run one headless turn: clean env + cli_setup, cwd a fresh dir, stdin /dev/null."""
    home, cwd = tmp_path / "home", tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    (cwd / "hello.txt").write_text(FILE_CONTENT + "\n")
    env_add, extra, model = cli_setup(name, server.url, home)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "TERM": "dumb",
           **env_add}
    argv = headless_argv(name, bins[name], model, extra, prompt)
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    return Run(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def describe(run: Run, server: ScriptedModelServer) -> str:
    reqs = [(r.method, r.path, r.kind, r.status) for r in server.requests]
    return (f"exit {run.returncode} after {run.seconds:.1f}s\nrequests: {reqs}\n"
            f"--- stdout\n{run.stdout[-3000:]}\n--- stderr\n{run.stderr[-3000:]}")


@pytest.mark.parametrize("name", NAMES)
def test_scripted_text_arrives(name, real_clis, model_server, tmp_path):
    answer = f"SCRIPTED_ANSWER_FOR_{name.upper()}"
    model_server.script(Rule("Say hello", Text(answer)))
    run = run_cli(name, real_clis, model_server, tmp_path)
    info = describe(run, model_server)
    assert run.returncode == 0, info
    assert answer in run.stdout, info
    turns = model_server.turns
    assert turns and "Say hello" in turns[0].prompt, info
    # the fake key reached the server, so the auth wiring is the one cli_setup chose
    assert any(STUB_KEY in v for v in turns[0].headers.values()), info
    if name == "pi":  # json mode exits 0 even on failure: check the message itself
        assert '"stopReason":"stop"' in run.stdout, info


@pytest.mark.parametrize("name", NAMES)
def test_scripted_401_is_a_visible_failure(name, real_clis, model_server, tmp_path):
    marker = "scripted-401-marker"
    model_server.script(Rule(None, Status(401, marker)))
    run = run_cli(name, real_clis, model_server, tmp_path)
    info = describe(run, model_server)
    assert model_server.turns, info
    assert "401" in run.output, info
    if name == "pi":
        # pi --mode json exits 0 on API errors; the failure is on the assistant message
        assert '"stopReason":"error"' in run.stdout, info
    else:
        assert run.returncode != 0, info
    if name == "claude":
        result = json.loads(run.stdout.strip().splitlines()[-1])
        assert result["is_error"] is True and result["api_error_status"] == 401, info
    assert run.seconds < 60, info  # retry knobs keep auth failures fast


@pytest.mark.parametrize("name", NAMES)
def test_scripted_read_tool_round_trips(name, real_clis, model_server, tmp_path):
    call = read_call(name, tmp_path / "work")
    model_server.script(Rule("read it", call))
    run = run_cli(name, real_clis, model_server, tmp_path, prompt="read it")
    info = describe(run, model_server)
    turns = model_server.turns
    assert len(turns) >= 2, info
    assert turns[0].reply == call, info
    assert any(FILE_CONTENT in r for r in turns[-1].tool_results), info
    assert "Proposal from" in run.stdout, info  # the default answer after the tool result


@pytest.mark.parametrize("name", NAMES)
def test_scripted_write_is_blocked_by_read_only_flags(name, real_clis, model_server, tmp_path):
    call = WRITE_CALLS[name]
    model_server.script(Rule("write it", call))
    run = run_cli(name, real_clis, model_server, tmp_path, prompt="write it")
    info = describe(run, model_server)
    turns = model_server.turns
    assert turns and turns[0].reply == call, info
    # the CLI got the call and answered with a (failed) tool result; nothing was written
    assert len(turns) >= 2 and turns[-1].tool_results, info
    assert not (tmp_path / "work" / "PWNED").exists(), info
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["hello.txt"], info


# claude/codex/gemini/pi fail within seconds thanks to cli_setup's retry knobs; copilot has no
# known knob and retries a 500 five times (~15 s), so it is left out to keep the suite quick.
@pytest.mark.parametrize("name", [n for n in NAMES if n != "copilot"])
def test_scripted_500_fails_fast(name, real_clis, model_server, tmp_path):
    model_server.script(Rule(None, Status(500, "scripted-500-marker")))
    run = run_cli(name, real_clis, model_server, tmp_path)
    info = describe(run, model_server)
    assert len(model_server.turns) == 1, info  # exactly one attempt: no retries
    if name == "pi":
        assert '"stopReason":"error"' in run.stdout, info
    else:
        assert run.returncode != 0, info
    assert run.seconds < 30, info


# ---- the server on its own (no CLI needed): the scripting semantics the real tests rely on


def _post(server: ScriptedModelServer, path: str, body: dict) -> tuple[int, str]:
    req = urllib.request.Request(server.url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _chat(*messages: dict) -> dict:
    return {"model": "m1", "stream": True, "messages": list(messages)}


def test_server_tool_call_then_falls_through_and_once_rules(model_server):
    model_server.script(Rule("go", ToolCall("bash", {"command": "ls"})),
                        Rule(None, Status(429, "busy"), once=True))
    user = {"role": "user", "content": "go"}
    status, body = _post(model_server, "/v1/chat/completions", _chat(user))
    assert status == 200 and '"finish_reason": "tool_calls"' in body and "data: [DONE]" in body
    call = {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "file-list"}
    # the tool was already called: fall through to the once-only 429, then to the default
    assert _post(model_server, "/v1/chat/completions", _chat(user, call, result))[0] == 429
    status, body = _post(model_server, "/v1/chat/completions", _chat(user, call, result))
    assert status == 200 and "Proposal from m1" in body and "file-list" in body
    assert [t.tool_results for t in model_server.turns] == [[], ["file-list"], ["file-list"]]


def test_server_debate_default_rules_on_judge_prompts(model_server):
    body = {"model": "judge-model", "stream": True, "max_tokens": 100, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Answer STATUS: RESOLVED or "
                                                             "STATUS: NEEDS_INPUT"}]}]}
    status, text = _post(model_server, "/v1/messages", body)
    assert status == 200 and "event: message_stop" in text
    assert '"text": "STATUS: RESOLVED\\nRuling by judge-model' in text


def test_server_side_requests_and_unknown_routes(model_server):
    router = {"contents": [{"role": "user", "parts": [{"text": "route"}]}],
              "generationConfig": {"responseJsonSchema": {"properties": {
                  "complexity_score": {"type": "integer"}}}}}
    status, text = _post(model_server, "/v1beta/models/flash-lite:generateContent", router)
    reply = json.loads(text)["candidates"][0]["content"]["parts"][0]["text"]
    assert status == 200 and json.loads(reply)["complexity_score"] == 1
    assert _post(model_server, "/v1/nowhere", {})[0] == 404
    with pytest.raises(urllib.error.HTTPError) as exc:  # codex's websocket probe
        urllib.request.urlopen(model_server.url + "/v1/responses", timeout=10)
    assert exc.value.code == 404
    assert [r.kind for r in model_server.requests] == ["router", "unknown", "websocket"]
    assert model_server.turns == []


def test_server_hang_is_released_by_stop():
    server = ScriptedModelServer([Rule(None, Hang())]).start()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            _post(server, "/v1/responses", {"model": "m", "input": "hi", "stream": True})
        except Exception as exc:  # the dropped connection is expected
            errors.append(exc)

    client = threading.Thread(target=call)
    client.start()
    deadline = time.monotonic() + 5
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    started = time.monotonic()
    server.stop()
    client.join(timeout=5)
    assert time.monotonic() - started < 3 and not client.is_alive() and errors
