"""copilot adapter: the command line it builds and how it reads real copilot 1.0.102 JSONL."""

from __future__ import annotations

import pytest

from captures import FIX, failed_as, made, real
from disputatio.adapters.base import (
    API_ERROR,
    AUTH,
    EMPTY,
    RATE_LIMIT,
    UNPARSEABLE,
    TurnRequest,
)
from disputatio.adapters.copilot import ADAPTER


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
    assert r.tokens == {} and r.cost_usd is None  # json mode reports neither


def test_tool_requests_are_evidence():
    r = ADAPTER.parse(real("copilot/tool_rg"))
    assert r.ok and r.text == "DONE_READ"
    assert r.evidence == {"commands": 0, "tool_calls": 1}


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
