"""pi coding agent (``pi -p --mode json``), proven against 0.73.1 (see docs/adapters.md).

pi has no permission layer at all: a model's ``bash touch`` simply runs. The tool allowlist
``--tools read,grep,find,ls`` is therefore the only thing keeping a turn read-only, and the
``--no-*`` flags keep extensions, skills, prompt templates and context files (which could add
tools or instructions) out of it. ``--no-session`` makes the run ephemeral.

In json mode pi exits 0 even when the API call failed: the failure is ``stopReason:"error"`` on
the last assistant message, which is what we classify on.
"""

from __future__ import annotations

from typing import Any

from disputatio.adapters import kit as c
from disputatio.adapters.base import Capture, TurnResult
from disputatio.adapters.fence import StateDir

READ_ONLY_TOOLS = "read,grep,find,ls"
FAILED_STOPS = {"error", "aborted"}


class Pi(c.BasicAdapter):
    name = "pi"
    vendor = "pi"  # the model's vendor depends on --model; config knows no better
    package = "@mariozechner/pi-coding-agent"
    tested_version = "0.73.1"
    state_dirs = (StateDir("PI_CODING_AGENT_DIR", ("~/.pi",)),
                  StateDir("PI_CODING_AGENT_SESSION_DIR"))
    args = (
        "-p",
        "--mode", "json",
        "--no-session",
        "--tools", READ_ONLY_TOOLS,
        "--no-extensions", "--no-skills", "--no-prompt-templates", "--no-context-files",
    )
    effort_flag = "--thinking"

    def parse(self, capture: Capture) -> TurnResult:
        failed = c.preflight(capture)
        if failed:
            return failed
        session = last = None
        cost = 0.0
        sums = {"input": 0, "output": 0, "cached": 0}
        calls: dict[str, str] = {}   # tool call id -> tool name
        unknown: set[str] = set()     # calls of a tool --tools does not offer: never ran
        for ev in capture.stdout_json_lines():
            kind = ev.get("type")
            msg = m if isinstance(m := ev.get("message"), dict) else {}
            if kind == "session":
                session = ev.get("id")
            elif kind == "tool_execution_start":
                calls[str(ev.get("toolCallId"))] = str(ev.get("toolName"))
            elif kind == "tool_execution_end" and _not_found(ev):
                unknown.add(str(ev.get("toolCallId")))
            elif kind == "message_end" and msg.get("role") == "assistant":
                last = msg
                # each assistant message is one model call: its usage adds up
                usage = msg.get("usage") or {}
                read = c.count(usage.get("cacheRead")) or 0
                sums["input"] += (c.count(usage.get("input")) or 0) + read + (
                    c.count(usage.get("cacheWrite")) or 0)
                sums["output"] += c.count(usage.get("output")) or 0
                sums["cached"] += read
                total = (usage.get("cost") or {}).get("total")
                cost += total if isinstance(total, (int, float)) else 0.0
        if last is None:
            return c.exit_failure(capture, "pi", "an assistant message_end event on stdout")
        ran = [name for call, name in calls.items() if call not in unknown]
        extra: dict[str, Any] = {
            "cost_usd": cost,
            "tokens": sums,
            "evidence": {"commands": ran.count("bash"), "tool_calls": len(ran)},
            "session_id": session,
        }
        if last.get("stopReason") in FAILED_STOPS:
            message = str(last.get("errorMessage") or f"pi stopped: {last.get('stopReason')}")
            return c.failure(message, **extra)
        text = "".join(
            part.get("text", "") for part in last.get("content") or []
            if isinstance(part, dict) and part.get("type") == "text"
        )
        return c.answer(text, "pi", **extra)


def _not_found(ev: dict) -> bool:
    """pi's answer to a call of a tool it does not offer (a failed read is still a read)."""
    result = r if isinstance(r := ev.get("result"), dict) else {}
    said = [part.get("text") for part in result.get("content") or [] if isinstance(part, dict)]
    return ev.get("isError") is True and said == [f"Tool {ev.get('toolName')} not found"]


ADAPTER = Pi()
