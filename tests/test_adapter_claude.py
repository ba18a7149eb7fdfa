"""claude adapter: the command line it builds and how it reads real claude 2.1.197 output."""

from __future__ import annotations

import json

import pytest

from captures import FIX, failed_as, made, real
from disputatio.adapters.base import (
    API_ERROR,
    AUTH,
    BUDGET,
    EMPTY,
    RATE_LIMIT,
    UNPARSEABLE,
    TurnRequest,
)
from disputatio.adapters.claude import ADAPTER


def test_argv_is_exact_and_the_prompt_goes_on_stdin():
    req = TurnRequest(prompt="Review this ☃", bin="/opt/claude", model="sonnet", effort="high",
                      max_budget_usd=0.5, extra_args=("--verbose",), env={"A": "1"})
    inv = ADAPTER.build(req)
    allowed = ("Bash(git diff *),Bash(git log *),Bash(git show *),Bash(git status *),"
               "Bash(git grep *),Bash(git blame *),Bash(pytest *),Bash(python -m pytest *),"
               "Bash(python3 -m pytest *),Bash(npm test *),Bash(go test *),Bash(cargo test *)")
    assert inv.argv == (
        "/opt/claude", "-p",
        "--tools", "Read,Grep,Glob,Bash",
        "--allowedTools", allowed,
        "--disallowedTools", "Bash(git *--output*)",
        "--mcp-config", '{"mcpServers":{}}', "--strict-mcp-config",
        "--permission-mode", "dontAsk",
        "--setting-sources", "user",
        "--no-session-persistence",
        "--output-format", "json",
        "--model", "sonnet", "--effort", "high", "--max-budget-usd", "0.5",
        "--verbose",
    )
    assert inv.stdin == "Review this ☃".encode()
    assert inv.env == {"A": "1"}
    assert not any("Write" in a or "Edit" in a for a in inv.argv)


def test_model_effort_and_budget_only_when_given():
    argv = ADAPTER.build(TurnRequest(prompt="p", bin="claude")).argv
    assert not {"--model", "--effort", "--max-budget-usd"} & set(argv)
    assert argv[-2:] == ("--output-format", "json")


def test_success_carries_text_cost_tokens_and_session():
    r = ADAPTER.parse(real("claude/success"))
    assert r.ok and r.text == "STUB_OK: hello from the local stub"
    assert r.cost_usd == 0.000141
    assert r.tokens == {"input": 12, "output": 7, "cached": 0}
    assert r.session_id == "924d703f-eb74-4740-abc6-6607a2ed2ebe"
    assert r.evidence == {"turns": 1, "denied": 0}


def test_tool_use_and_denials_are_evidence():
    assert ADAPTER.parse(real("claude/tool_read")).evidence == {"turns": 2, "denied": 0}
    denied = ADAPTER.parse(real("claude/bash_denied"))  # our argv; the model tried `touch`
    assert denied.ok and denied.evidence == {"turns": 2, "denied": 1}


@pytest.mark.parametrize("case, kind, message", [
    ("claude/not_logged_in", AUTH, "Not logged in · Please run /login"),
    ("claude/api_401", AUTH, "Failed to authenticate. API Error: 401 stub forced 401"),
    ("claude/rate_limit", RATE_LIMIT, "API Error: Request rejected (429) · scripted-429"),
    ("claude/api_500", API_ERROR, "API Error: 500 stub forced 500."),
    ("claude/max_turns", API_ERROR, "Reached maximum number of turns (1)"),
    ("claude/budget", BUDGET, "Reached maximum budget ($0.0001)"),
    # a CLI usage error: no JSON at all, the message is on stderr
    ("claude/stream_json_needs_verbose", API_ERROR,
     "Error: When using --print, --output-format=stream-json requires --verbose"),
])
def test_failures_are_classified_on_is_error_not_subtype(case, kind, message):
    failed_as(ADAPTER, case, kind, message)


def test_budget_failure_keeps_what_was_spent():
    # 2.1.197 zeroes ``usage`` on error subtypes; ``modelUsage`` still has the real counts
    r = ADAPTER.parse(real("claude/budget"))
    assert r.cost_usd == 0.00081
    assert r.tokens == {"input": 120, "output": 30, "cached": 0}


def test_blank_result_is_empty(tmp_path):
    line = json.loads((FIX / "claude/success.stdout").read_text())
    line["result"] = "  \n"
    r = ADAPTER.parse(made(tmp_path, json.dumps(line) + "\n"))
    assert r.failure == EMPTY and r.cost_usd == 0.000141


def test_garbage_is_unparseable(tmp_path):
    r = ADAPTER.parse(made(tmp_path, "<html>proxy error</html>\n"))
    assert r.failure == UNPARSEABLE and "JSON result object" in r.message
