"""Codex CLI (``codex exec --json``), proven against 0.171.0 (see docs/adapters.md).

Read-only through ``--sandbox read-only``: model-run commands execute in a bubblewrap sandbox
where writes fail with "Read-only file system". The prompt is read from stdin (``-``).

That sandbox is kept inside disputatio's own write fence, nested (measured with bwrap 0.8, as
root and as an unprivileged user): its helper aliases live in ``CODEX_HOME``, a state dir the
fence leaves writable. It still adds what the fence leaves open to a command: the checkout,
``CODEX_HOME`` and the network. Its cost: no writable temp dir, so a test suite cannot start
under it (pytest: "No usable temporary directory"). ``--sandbox workspace-write`` lets one run
(measured, nested too) but opens the checkout to writes and, without the fence, the real
``/tmp``.

The JSONL stream is noisy on purpose: ``error`` events saying "Reconnecting…" and
``item.completed`` items of type ``error`` ("Falling back from WebSockets…") are progress
reports, not failures. Only ``turn.failed`` (or a failed exit with no answer) is a failure.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from disputatio.adapters import kit as c
from disputatio.adapters.base import (
    API_ERROR,
    AUTH,
    Capture,
    GiveUp,
    Invocation,
    TurnRequest,
    TurnResult,
)
from disputatio.adapters.fence import StateDir

# item types that are the agent acting on the world, as opposed to talking or thinking
TOOL_ITEMS = {
    "command_execution", "file_change", "mcp_tool_call", "collab_tool_call", "web_search",
}

# Without a network codex never fails by itself: after its counted retries it loops on this
# event for as long as it is left running. A minute of nothing else ends the turn (a short
# outage is survived); ``--doctor`` ends its canary at the first one.
NO_NETWORK = GiveUp(
    pattern=rb'^\s*\{\s*"type"\s*:\s*"error"\s*,\s*"message"\s*:\s*"Reconnecting\W+waiting for '
            rb'network',
    reason="codex cannot reach its API and only retries",
    kind=API_ERROR,
    patience_s=60.0,
)


class Codex(c.BasicAdapter):
    name = "codex"
    vendor = "OpenAI"
    package = "@openai/codex"
    tested_version = "0.171.0"
    # auth.json, sessions, sqlite state, and the helper aliases its own bwrap sandbox needs
    state_dirs = (StateDir("CODEX_HOME", ("~/.codex",)),)

    def build(self, request: TurnRequest) -> Invocation:
        argv = [
            request.bin, "exec", "--json",
            "--skip-git-repo-check",  # checkouts may be plain directories; exit 1 without it
            "--sandbox", "read-only",
            *c.flag("-m", request.model),
            *c.flag("-c", request.effort and f"model_reasoning_effort={request.effort}"),
            *request.extra_args,
            "-",  # the prompt comes from stdin
        ]
        return dataclasses.replace(c.invocation(request, argv), give_up=NO_NETWORK)

    def parse(self, capture: Capture) -> TurnResult:
        failed = c.preflight(capture)
        if failed:
            if capture.timed_out or capture.gave_up:
                # codex retries forever without a network; its last word says why
                said = [e.get("message") for e in capture.stdout_json_lines()
                        if e.get("type") == "error" and e.get("message")]
                if said:
                    failed.message = c.one_line(f"{failed.message}; codex last said: {said[-1]}")
            return failed
        session = answer = turn_failed = last_error = None
        usage: dict = {}
        completed = False
        tools: dict[str, str] = {}  # item id -> type, so started+completed count once
        for ev in capture.stdout_json_lines():
            kind = ev.get("type")
            item = it if isinstance(it := ev.get("item"), dict) else {}
            if kind == "thread.started":
                session = ev.get("thread_id")
            elif kind == "item.completed" and item.get("type") == "agent_message":
                answer = item.get("text")
            elif kind == "turn.completed":
                completed = True
                usage = ev.get("usage") or {}  # cumulative for the thread: keep the last
            elif kind == "turn.failed":
                turn_failed = (ev.get("error") or {}).get("message") or "turn failed"
            elif kind == "error":
                last_error = ev.get("message")
            if kind in ("item.started", "item.completed") and item.get("type") in TOOL_ITEMS:
                tools[str(item.get("id"))] = item["type"]
        extra: dict[str, Any] = {
            "tokens": c.reported(
                input=c.count(usage.get("input_tokens")),
                output=c.count(usage.get("output_tokens")),
                cached=c.count(usage.get("cached_input_tokens")),
                reasoning=c.count(usage.get("reasoning_output_tokens")),
            ),
            "evidence": {
                "commands": sum(1 for t in tools.values() if t == "command_execution"),
                "tool_calls": len(tools),
            },
            "session_id": session,
        }
        if turn_failed:
            if str(turn_failed).startswith("Missing environment variable"):
                # the provider's env_key: the variable that should hold its API key
                return TurnResult.failed(AUTH, str(turn_failed), **extra)
            return c.failure(str(turn_failed), **extra)
        if answer is not None or completed:
            return c.answer(answer, "codex", **extra)
        if capture.exit_code and last_error:
            return c.failure(str(last_error), **extra)
        return c.exit_failure(capture, "codex", "JSONL events ending in turn.completed on stdout")


ADAPTER = Codex()
