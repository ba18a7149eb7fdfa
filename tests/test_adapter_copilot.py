"""copilot adapter: the command line it builds and how it reads real copilot 1.0.102 JSONL."""

from __future__ import annotations

import dataclasses
import os
import shutil

import pytest

from disputatio.adapters import kit
from disputatio.adapters.base import (
    API_ERROR,
    AUTH,
    EMPTY,
    RATE_LIMIT,
    UNPARSEABLE,
    Capture,
    TurnRequest,
    collect,
)
from disputatio.adapters.copilot import ADAPTER, SESSION_EVENTS
from support.captures import FIX, failed_as, made, real


def test_argv_is_exact_and_the_prompt_goes_on_stdin_without_p():
    req = TurnRequest(prompt="Review", bin="/opt/copilot", model="gpt-5.4", effort="low",
                      extra_args=("--no-color",))
    inv = ADAPTER.build(req)
    assert inv.argv == (
        "/opt/copilot", "--output-format", "json", "--available-tools=view,rg,grep,glob",
        "--allow-all-tools", "--disable-builtin-mcps", "--no-custom-instructions",
        "--no-ask-user", "--no-auto-update", "--model", "gpt-5.4", "--reasoning-effort", "low",
        "--no-color",
    )
    assert inv.stdin == b"Review"
    assert "-p" not in inv.argv  # -p would need the prompt text in argv


def test_allow_all_tools_never_comes_without_the_allowlist():
    argv = ADAPTER.build(TurnRequest(prompt="p", bin="copilot")).argv
    assert argv.index("--available-tools=view,rg,grep,glob") < argv.index("--allow-all-tools")
    assert not {"--model", "--reasoning-effort"} & set(argv)


def test_success_is_the_last_message_without_tool_requests():
    r = ADAPTER.parse(real("copilot/success"))
    assert r.ok and r.text == "STUB_OK: hello from the local stub"
    assert r.session_id == "30da6b72-3f2e-40b1-866c-1dc5b802ff92"
    # stdout reports neither: tokens come from the session's events file (collect)
    assert r.tokens == {} and r.cost_usd is None


def test_tool_calls_that_ran_are_evidence():
    r = ADAPTER.parse(real("copilot/tool_rg"))
    assert r.ok and r.text == "DONE_READ"
    assert r.evidence == {"commands": 0, "tool_calls": 1}
    # a view of a missing file failed, but it ran
    assert ADAPTER.parse(real("copilot/view_missing")).evidence == {"commands": 0,
                                                                    "tool_calls": 1}


@pytest.mark.parametrize("case", [
    "copilot/bash_unknown",   # "Tool 'bash' does not exist": not offered by the allowlist
    "copilot/view_denied",    # code "denied": no permission (a run without --allow-all-tools)
])
def test_calls_refused_or_of_unknown_tools_are_not_evidence(case):
    r = ADAPTER.parse(real(case))
    assert r.ok and r.text == "DONE"
    assert r.evidence == {"commands": 0, "tool_calls": 0}, r


def with_session_events(case: str):
    """A recorded run plus its session events file, as ``collect`` leaves it beside stdout."""
    return dataclasses.replace(real(case), collected={
        SESSION_EVENTS: FIX / f"{case}.session-events.jsonl"})


def test_tokens_are_the_sum_of_the_sessions_usage_records():
    # the scripted server reported (4037 in, 411 out, 1005 cached) and (4074, 422, 1010)
    r = ADAPTER.parse(with_session_events("copilot/tool_view_usage"))
    assert r.ok and r.text == "DONE" and r.evidence == {"commands": 0, "tool_calls": 1}
    assert r.tokens == {"input": 8111, "output": 833, "cached": 2015}


def test_without_the_session_events_the_tokens_are_unknown():
    assert ADAPTER.parse(real("copilot/tool_view_usage")).tokens == {}


def test_collect_copies_the_sessions_events_from_copilot_home(tmp_path):
    session = "3a23f2fb-86dc-4a9c-9124-f1108a387890"   # the recorded run's result.sessionId
    events = FIX / "copilot/tool_view_usage.session-events.jsonl"
    home = tmp_path / "home"
    (home / "session-state" / session).mkdir(parents=True)
    shutil.copyfile(events, home / "session-state" / session / "events.jsonl")
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copyfile(FIX / "copilot/tool_view_usage.stdout", raw / "t.stdout")
    capture = Capture(raw / "t.stdout", raw / "t.stderr", exit_code=0)
    got = collect(ADAPTER, capture, {"COPILOT_HOME": str(home), "HOME": "/nonexistent"})
    assert got.collected == {SESSION_EVENTS: raw / "t.session-events.jsonl"}
    assert got.collected[SESSION_EVENTS].read_bytes() == events.read_bytes()
    assert ADAPTER.parse(got).tokens == {"input": 8111, "output": 833, "cached": 2015}
    # the default home is $HOME/.copilot
    (tmp_path / "h").mkdir()
    (home).rename(tmp_path / "h" / ".copilot")
    got = collect(ADAPTER, capture, {"HOME": str(tmp_path / "h")})
    assert ADAPTER.parse(got).tokens["output"] == 833


@pytest.mark.parametrize("stdout", [
    "",                                                              # no result line
    '{"type":"result","sessionId":"../../etc","exitCode":0}\n',     # not a session id
    '{"type":"result","sessionId":"no-such-session","exitCode":0}\n',
])
def test_collect_gathers_nothing_it_cannot_trust_or_find(tmp_path, stdout):
    (tmp_path / "t.stdout").write_text(stdout)
    capture = Capture(tmp_path / "t.stdout", tmp_path / "t.stderr", exit_code=0)
    got = collect(ADAPTER, capture, {"COPILOT_HOME": str(tmp_path)})
    assert got.collected == {} and ADAPTER.parse(got).tokens == {}


@pytest.mark.parametrize("case, kind, message", [
    ("copilot/api_401", AUTH, "Authentication failed with provider"),
    ("copilot/api_500", API_ERROR, "Failed to get response from the AI model"),
    # plain text on stderr even in json mode, no JSON at all
    ("copilot/no_auth", AUTH, "Error: No authentication information found."),
    ("copilot/classic_pat", AUTH, "Classic Personal Access Tokens (ghp_) are not supported"),
])
def test_failures(case, kind, message):
    failed_as(ADAPTER, case, kind, message)


def test_session_error_429_is_rate_limit(tmp_path):
    # the api_500 run's session.error with the status a 429 carries (its real text was:
    # "... Last error: 429 scripted-429 rate limited")
    lines = (FIX / "copilot/api_500.stdout").read_text().splitlines()
    out = [ln.replace('"statusCode":500', '"statusCode":429') if "session.error" in ln else ln
           for ln in lines]
    assert ADAPTER.parse(made(tmp_path, "\n".join(out) + "\n", exit_code=1)).failure == RATE_LIMIT


def test_no_final_message_is_empty(tmp_path):
    lines = [ln for ln in (FIX / "copilot/success.stdout").read_text().splitlines()
             if '"type":"assistant.message"' not in ln]
    assert ADAPTER.parse(made(tmp_path, "\n".join(lines) + "\n")).failure == EMPTY


def test_garbage_is_unparseable(tmp_path):
    r = ADAPTER.parse(made(tmp_path, "● thinking…\nsomething\n"))
    assert r.failure == UNPARSEABLE and "result line" in r.message


@pytest.mark.parametrize("plant", ["symlink-to-dev-zero", "fifo", "directory"])
def test_collect_treats_the_session_file_as_hostile(tmp_path, plant):
    """The state dir is writable to the agent: what it planted there must not make disputatio
    read without end (a symlink to /dev/zero) or block (a fifo); the turn just has no tokens."""
    session = "3a23f2fb-86dc-4a9c-9124-f1108a387890"
    home = tmp_path / "home"
    folder = home / "session-state" / session
    folder.mkdir(parents=True)
    planted = folder / "events.jsonl"
    if plant == "symlink-to-dev-zero":
        planted.symlink_to("/dev/zero")
    elif plant == "fifo":
        os.mkfifo(planted)
    else:
        planted.mkdir()
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copyfile(FIX / "copilot/tool_view_usage.stdout", raw / "t.stdout")
    capture = Capture(raw / "t.stdout", raw / "t.stderr", exit_code=0)
    got = collect(ADAPTER, capture, {"COPILOT_HOME": str(home)})
    assert got.collected == {} and ADAPTER.parse(got).tokens == {}
    copied = raw / "t.session-events.jsonl"
    assert not copied.exists() or copied.stat().st_size == 0


def test_an_agent_file_is_copied_within_a_limit(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 5000)
    kit.copy_agent_file(tmp_path / "big", tmp_path / "copy", limit=1000)
    assert (tmp_path / "copy").read_bytes() == b"x" * 1000
