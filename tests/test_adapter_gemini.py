"""gemini adapter: the command line it builds and how it reads real gemini 0.61.0 output."""

from __future__ import annotations

import json
import tomllib

import pytest

from disputatio.adapters.base import (
    API_ERROR,
    AUTH,
    EMPTY,
    RATE_LIMIT,
    UNPARSEABLE,
    TurnRequest,
)
from disputatio.adapters.gemini import ADAPTER
from support.captures import FIX, failed_as, made, real


def test_argv_is_exact_and_the_prompt_goes_on_stdin():
    req = TurnRequest(prompt="Review", bin="/opt/gemini", model="gemini-2.5-flash",
                      effort="high", extra_args=("--debug",), env={"GEMINI_API_KEY": "k"})
    inv = ADAPTER.build(req)
    # -p "" appends nothing to stdin but forces headless mode; no effort flag exists
    assert inv.argv == ("/opt/gemini", "-p", "", "-o", "json", "--approval-mode", "plan",
                        "--admin-policy", "{scratch}/gemini-admin-policy.toml",
                        "-m", "gemini-2.5-flash", "--debug")
    assert inv.stdin == b"Review"
    assert inv.env == {"GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_API_KEY": "k"}
    assert set(inv.files) == {"gemini-admin-policy.toml"}


def test_an_admin_policy_denies_leaving_plan_mode_and_every_writing_tool():
    # plan mode alone lets write_file plan.md -> exit_plan_mode ("Switching to YOLO mode") ->
    # run_shell_command through; a denied tool is not even offered to the model
    inv = ADAPTER.build(TurnRequest(prompt="p", bin="gemini"))
    policy = tomllib.loads(inv.files["gemini-admin-policy.toml"].decode())
    [rule] = policy["rule"]
    assert set(rule["toolName"]) == {"exit_plan_mode", "write_file", "replace",
                                     "run_shell_command"}
    assert rule["decision"] == "deny" and rule["priority"] == 999
    assert not {"modes", "argsPattern", "interactive"} & set(rule)  # always, for any call


def test_user_env_wins_over_adapter_defaults():
    req = TurnRequest(prompt="p", bin="gemini", env={"GEMINI_CLI_TRUST_WORKSPACE": "false"})
    assert ADAPTER.build(req).env == {"GEMINI_CLI_TRUST_WORKSPACE": "false"}


def test_success_from_the_pretty_printed_object():
    r = ADAPTER.parse(real("gemini/success"))
    assert r.ok and r.text == "STUB_OK: hello from the local stub"
    assert r.tokens == {"input": 12, "output": 7, "cached": 0, "reasoning": 0}
    assert r.session_id == "c7c13f6c-fb95-4b16-a81f-562a90b6ad2e"
    assert r.evidence == {"tool_calls": 0, "commands": 0}


def test_router_calls_count_in_the_tokens():
    assert ADAPTER.parse(real("gemini/success_router")).tokens["input"] == 24


def test_tool_calls_that_ran_are_evidence():
    assert ADAPTER.parse(real("gemini/tool_read")).evidence == {"tool_calls": 1, "commands": 0}
    # a read of a missing file failed, but it ran: it is still a look at the checkout
    assert ADAPTER.parse(real("gemini/read_missing")).evidence == {"tool_calls": 1,
                                                                   "commands": 0}


@pytest.mark.parametrize("case", [
    "gemini/plan_write_denied",   # write_file, denied by plan mode
    "gemini/shell_unknown",       # run_shell_command, "not found" in plan mode
])
def test_calls_refused_or_of_unknown_tools_are_not_evidence(case):
    r = ADAPTER.parse(real(case))
    assert r.ok and r.evidence == {"tool_calls": 0, "commands": 0}, r


@pytest.mark.parametrize("case, kind, message", [
    ("gemini/no_auth", AUTH, "Please set an Auth method"),
    ("gemini/invalid_auth_method", AUTH, "Invalid auth method selected."),
    # JSON on stderr after log lines and an error dump; exit 145 = 401 mod 256
    ("gemini/api_401", AUTH, "stub forced 401"),
    # plain text with ANSI colour, exit 55
    ("gemini/untrusted", API_ERROR, "Gemini CLI is not running in a trusted directory."),
])
def test_failures(case, kind, message):
    assert "\x1b" not in failed_as(ADAPTER, case, kind, message).message


def test_failure_keeps_the_session_id():
    r = ADAPTER.parse(real("gemini/api_401"))
    assert r.session_id == "2bc595fb-adf5-4011-92a2-7d32902300db"


def test_rate_limit_by_error_code(tmp_path):
    # the shape of gemini/api_401.stderr with the code a 429 carries (0.61 retries 429s for
    # minutes, so no probe run got this far)
    err = json.dumps({"session_id": "s", "error": {"type": "Error", "code": 429,
                                                   "message": "Resource has been exhausted"}},
                     indent=2)
    r = ADAPTER.parse(made(tmp_path, stderr="Warning: x\n" + err, exit_code=429 % 256))
    assert r.failure == RATE_LIMIT


def test_blank_response_is_empty(tmp_path):
    obj = json.loads((FIX / "gemini/success.stdout").read_text())
    obj["response"] = ""
    r = ADAPTER.parse(made(tmp_path, json.dumps(obj, indent=2)))
    assert r.failure == EMPTY and r.tokens["output"] == 7


def test_garbage_is_unparseable(tmp_path):
    r = ADAPTER.parse(made(tmp_path, "Loaded cached credentials.\nhello\n"))
    assert r.failure == UNPARSEABLE and "'response'" in r.message
