"""codex adapter: the command line it builds and how it reads real codex 0.171.0 JSONL."""

from __future__ import annotations

import json

import pytest

from disputatio.adapters.base import (
    API_ERROR,
    AUTH,
    EMPTY,
    RATE_LIMIT,
    UNPARSEABLE,
    TurnRequest,
)
from disputatio.adapters.codex import ADAPTER
from support.captures import FIX, failed_as, made, real


def test_argv_is_exact_and_the_prompt_is_read_from_stdin():
    req = TurnRequest(prompt="Review", bin="/opt/codex", model="gpt-5.5", effort="low",
                      extra_args=("-c", "model_provider=stub"))
    inv = ADAPTER.build(req)
    assert inv.argv == (
        "/opt/codex", "exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only",
        "-m", "gpt-5.5", "-c", "model_reasoning_effort=low", "-c", "model_provider=stub", "-",
    )
    assert inv.stdin == b"Review"


def test_model_and_effort_only_when_given():
    argv = ADAPTER.build(TurnRequest(prompt="p", bin="codex")).argv
    assert argv == ("codex", "exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only",
                    "-")


def test_success_carries_text_usage_and_thread():
    r = ADAPTER.parse(real("codex/success"))
    assert r.ok and r.text == "STUB_OK: hello from the local stub"
    assert r.tokens == {"input": 12, "output": 7, "cached": 0, "reasoning": 0}
    assert r.session_id == "01a2289d-95bc-7371-9bcf-21d9688924f6"
    assert r.cost_usd is None  # codex reports no money


@pytest.mark.parametrize("case", ["codex/success_error_item", "codex/reconnect_then_success"])
def test_error_items_and_reconnect_events_are_not_failures(case):
    r = ADAPTER.parse(real(case))
    assert r.ok and r.text == "STUB_OK: hello from the local stub"


def test_commands_are_counted_once_per_item():
    # item.started + item.completed for the same command_execution
    r = ADAPTER.parse(real("codex/tool_cat"))
    assert r.ok and r.evidence == {"commands": 1, "tool_calls": 1}


def test_a_command_that_ran_counts_whatever_its_exit_and_a_refused_one_does_not():
    # ls of a missing file ran (status failed, exit 2): evidence
    assert ADAPTER.parse(real("codex/ls_failed")).evidence == {"commands": 1, "tool_calls": 1}
    # a write the read-only sandbox refused: codex reports no item at all
    r = ADAPTER.parse(real("codex/touch_refused"))
    assert r.ok and r.evidence == {"commands": 0, "tool_calls": 0}, r


def test_usage_comes_from_the_last_turn_completed(tmp_path):
    # resumed threads report cumulative usage: summing would double count (built from the
    # real success shape; no probe ran two turns in one process)
    lines = (FIX / "codex/success.stdout").read_text().splitlines()
    later = json.dumps({"type": "turn.completed", "usage": {
        "input_tokens": 30, "cached_input_tokens": 10, "output_tokens": 9,
        "reasoning_output_tokens": 4}})
    r = ADAPTER.parse(made(tmp_path, "\n".join([*lines, later]) + "\n"))
    assert r.tokens == {"input": 30, "output": 9, "cached": 10, "reasoning": 4}


@pytest.mark.parametrize("case, kind, message", [
    ("codex/api_401", AUTH, "unexpected status 401 Unauthorized: stub forced 401"),
    ("codex/missing_env_key", AUTH, "Missing environment variable: `STUB_API_KEY`."),
    ("codex/rate_limit", RATE_LIMIT, "exceeded retry limit, last status: 429 Too Many Requests"),
    ("codex/api_500", API_ERROR, "currently experiencing high demand"),
    # no JSON failure event: the message comes from stderr
    ("codex/not_trusted", API_ERROR, "Not inside a trusted directory"),
    ("codex/input_too_long", API_ERROR, "Input exceeds the maximum length of 1048576"),
])
def test_failures(case, kind, message):
    failed_as(ADAPTER, case, kind, message)


def test_turn_failed_keeps_the_thread_id():
    assert ADAPTER.parse(real("codex/api_401")).session_id == "01a2289e-b9f4-76e3-8652-8900f25e6e10"


def test_completed_turn_without_a_message_is_empty(tmp_path):
    lines = [ln for ln in (FIX / "codex/success.stdout").read_text().splitlines()
             if "agent_message" not in ln]
    assert ADAPTER.parse(made(tmp_path, "\n".join(lines) + "\n")).failure == EMPTY


def test_garbage_is_unparseable(tmp_path):
    r = ADAPTER.parse(made(tmp_path, "Segmentation fault? no: just text\n"))
    assert r.failure == UNPARSEABLE and "turn.completed" in r.message
