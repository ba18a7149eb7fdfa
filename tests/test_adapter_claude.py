"""claude adapter: the command line it builds and how it reads real claude 2.1.197 output."""

from __future__ import annotations

import json
import re

import pytest

from disputatio.adapters.base import (
    API_ERROR,
    AUTH,
    BUDGET,
    EMPTY,
    RATE_LIMIT,
    UNPARSEABLE,
    TurnRequest,
)
from disputatio.adapters.claude import ADAPTER, ALLOWED_TOOLS, DENIED_TOOLS
from support.captures import FIX, failed_as, made, real
from support.claude_commands import ESCAPES, READS


def test_argv_is_exact_and_the_prompt_goes_on_stdin():
    req = TurnRequest(prompt="Review this ☃", bin="/opt/claude", model="sonnet", effort="high",
                      max_budget_usd=0.5, extra_args=("--verbose",), env={"A": "1"})
    inv = ADAPTER.build(req)
    allowed = ("Bash(git diff *),Bash(git log *),Bash(git show *),Bash(git status *),"
               "Bash(git blame *),Bash(pytest *),Bash(python -m pytest *),"
               "Bash(python3 -m pytest *),Bash(npm test),Bash(npm test -- *),Bash(go test *),"
               "Bash(cargo test *)")
    assert inv.argv == (
        "/opt/claude", "-p",
        "--tools", "Read,Grep,Glob,Bash",
        "--allowedTools", allowed,
        "--disallowedTools", DENIED_TOOLS,
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


def _rule(pattern: str) -> re.Pattern:
    """A Bash permission rule as 2.1.197 matches it against the raw command (measured with the
    real binary, tests/real/test_real_fence.py): "*" is anything, a trailing " *" also matches
    the bare command, and four backslashes stand for one."""
    body = pattern.removeprefix("Bash(").removesuffix(")")
    bare, body = body.endswith(" *"), body.removesuffix(" *")
    parts = [re.escape(p.replace("\\" * 4, "\\")) for p in body.split("*")]
    return re.compile(".*".join(parts) + ("( .*)?" if bare else ""), re.S)


def _verdict(command: str) -> str:
    if any(_rule(r).fullmatch(command) for r in DENIED_TOOLS.split(",")):
        return "denied"
    if any(_rule(r).fullmatch(command) for r in ALLOWED_TOOLS.split(",")):
        return "allowed"
    return "not approved"


@pytest.mark.parametrize("command", ESCAPES)
def test_argument_forms_that_write_or_execute_are_not_approved(command):
    assert _verdict(command) != "allowed"


@pytest.mark.parametrize("command", READS)
def test_the_commands_a_reviewer_needs_stay_approved(command):
    assert _verdict(command) == "allowed"


def test_git_grep_is_not_approved_at_all():
    # its -O runs any command, also abbreviated or bundled: the Grep tool searches instead
    assert "git grep" not in ALLOWED_TOOLS and _verdict("git grep foo") == "not approved"


def test_a_backslash_is_written_as_four_in_a_rule():
    backslash = "\\"
    rules = [r for r in DENIED_TOOLS.split(",") if backslash in r]
    assert rules and all(r.endswith("*" + backslash * 4 + "*)") for r in rules), rules


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
