"""pi adapter: the command line it builds and how it reads real pi 0.73.1 JSONL."""

from __future__ import annotations

import pytest

from disputatio.adapters.base import (
    API_ERROR,
    AUTH,
    EMPTY,
    RATE_LIMIT,
    UNPARSEABLE,
    TurnRequest,
)
from disputatio.adapters.pi import ADAPTER
from support.captures import EXITS, FIX, failed_as, made, real


def test_argv_is_exact_and_the_prompt_goes_on_stdin():
    req = TurnRequest(prompt="Review", bin="/opt/pi", model="anthropic/claude-x", effort="low",
                      extra_args=("--offline",))
    inv = ADAPTER.build(req)
    assert inv.argv == (
        "/opt/pi", "-p", "--mode", "json", "--no-session", "--tools", "read,grep,find,ls",
        "--no-extensions", "--no-skills", "--no-prompt-templates", "--no-context-files",
        "--model", "anthropic/claude-x", "--thinking", "low", "--offline",
    )
    assert inv.stdin == b"Review"
    assert "bash" not in " ".join(inv.argv)  # the allowlist is pi's only guard


def test_success_carries_text_cost_tokens_and_session():
    r = ADAPTER.parse(real("pi/success_cost"))
    assert r.ok and r.text == "STUB_OK: hello from the local stub"
    assert r.cost_usd == pytest.approx(0.000235)
    assert r.tokens == {"input": 12, "output": 7, "cached": 0}
    assert r.session_id == "01a228a3-1906-74e2-9522-6507a199a9f1"


def test_tool_executions_are_evidence_and_usage_adds_up_over_calls():
    r = ADAPTER.parse(real("pi/tool_read"))
    assert r.ok and r.text == "DONE_READ"
    assert r.evidence == {"commands": 0, "tool_calls": 1}
    assert r.tokens == {"input": 240, "output": 60, "cached": 0}  # two model calls


def test_a_call_of_a_tool_pi_does_not_offer_is_not_evidence():
    r = ADAPTER.parse(real("pi/bash_unknown"))   # "Tool bash not found"
    assert r.ok and r.text == "DONE"
    assert r.evidence == {"commands": 0, "tool_calls": 0}, r
    # a read of a missing file failed, but it ran
    assert ADAPTER.parse(real("pi/read_missing")).evidence == {"commands": 0, "tool_calls": 1}


@pytest.mark.parametrize("case, kind, message", [
    # exit 0 in json mode: the failure is stopReason "error" on the last assistant message
    ("pi/api_401", AUTH, "401 stub forced 401"),
    ("pi/rate_limit", RATE_LIMIT, "429 scripted-429 rate limited"),
    ("pi/api_500_retried", API_ERROR, "500 stub forced 500"),
    ("pi/connection_error", API_ERROR, "Connection error."),
    # exit 1, only the session line on stdout, the reason on stderr
    ("pi/no_api_key", AUTH, "No API key found for the selected model."),
])
def test_failures(case, kind, message):
    assert EXITS[case] == (1 if case == "pi/no_api_key" else 0)
    failed_as(ADAPTER, case, kind, message)


def test_blank_text_is_empty(tmp_path):
    out = (FIX / "pi/success.stdout").read_text().replace(
        '"text":"STUB_OK: hello from the local stub"', '"text":""')
    assert ADAPTER.parse(made(tmp_path, out)).failure == EMPTY


def test_garbage_is_unparseable(tmp_path):
    r = ADAPTER.parse(made(tmp_path, "STUB_OK: text mode output\n"))
    assert r.failure == UNPARSEABLE and "message_end" in r.message
