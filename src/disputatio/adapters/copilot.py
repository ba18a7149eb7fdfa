"""GitHub Copilot CLI (``copilot --output-format json``), proven against 1.0.102.

The prompt goes on stdin with no ``-p``: ``-p`` takes the prompt text as its value (argv), while
a piped stdin alone already runs one non-interactive turn (verified against a stub).

Read-only through ``--available-tools``: only view, rg, grep and glob exist for the model (the
grep tool is ``rg`` for OpenAI-family models and ``grep`` for Anthropic-family ones), so a shell
or write call gets "Tool 'bash' does not exist". ``--allow-all-tools`` is passed only together
with that allowlist, to auto-approve those four read tools.

Tokens: JSON mode prints none, but copilot records every model request's usage as a
``session.usage_record`` event in ``$COPILOT_HOME/session-state/<session id>/events.jsonl``
(home default ``~/.copilot``); ``collect`` copies that file beside the raw output.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from disputatio.adapters import kit as c
from disputatio.adapters.base import AUTH, Capture, TurnResult
from disputatio.adapters.fence import StateDir

READ_ONLY_TOOLS = "view,rg,grep,glob"
SHELL_TOOLS = {"bash", "shell", "powershell"}  # none exists under the allowlist: commands = 0
SESSION_EVENTS = "session_events"
# a session id names a folder: nothing that could lead out of session-state/
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
# a call copilot refused rather than ran: a tool outside the allowlist
_UNKNOWN_TOOL = re.compile(r"^Tool '[^']*' does not exist")


class Copilot(c.BasicAdapter):
    name = "copilot"
    vendor = "GitHub"
    package = "@github/copilot"
    tested_version = "1.0.102"
    # its home (session-state, session-store.db) and the 235 MB package it unpacks once
    state_dirs = (StateDir("COPILOT_HOME", ("~/.copilot",)),
                  StateDir("XDG_CACHE_HOME", ("~/.cache/copilot",), subdir="copilot"))
    args = (
        "--output-format", "json",
        f"--available-tools={READ_ONLY_TOOLS}",
        "--allow-all-tools",  # safe only because of the allowlist above
        "--disable-builtin-mcps",
        "--no-custom-instructions",
        "--no-ask-user",
        "--no-auto-update",
    )
    effort_flag = "--reasoning-effort"

    def collect(self, capture: Capture, env: Mapping[str, str]) -> dict[str, Path]:
        """Copy the session's events file (usage per request) beside the raw output."""
        session = next((ev.get("sessionId") for ev in capture.stdout_json_lines()
                        if ev.get("type") == "result"), None)
        if not isinstance(session, str) or not _SESSION_ID.fullmatch(session):
            return {}
        home = env.get("COPILOT_HOME") or os.path.join(env.get("HOME") or Path.home(),
                                                       ".copilot")
        source = Path(home).expanduser() / "session-state" / session / "events.jsonl"
        target = capture.beside(".session-events.jsonl")
        c.copy_agent_file(source, target)
        return {SESSION_EVENTS: target}

    def parse(self, capture: Capture) -> TurnResult:
        failed = c.preflight(capture)
        if failed:
            return failed
        answer = error = result = None
        started: dict[str, str] = {}   # tool call id -> tool name
        calls: list[str] = []          # the tools that ran (refused calls left out)
        for ev in capture.stdout_json_lines():
            kind, data = ev.get("type"), ev.get("data")
            data = data if isinstance(data, dict) else {}
            if kind == "assistant.message":
                if not data.get("toolRequests"):
                    answer = data.get("content")
            elif kind == "tool.execution_start":
                started[str(data.get("toolCallId"))] = str(data.get("toolName"))
            elif kind == "tool.execution_complete" and _ran(data):
                calls.append(started.get(str(data.get("toolCallId")), ""))
            elif kind == "session.error":
                error = data
            elif kind == "result":
                result = ev
        if result is None and error is None:
            # no JSON at all: auth problems are plain text on stderr, even in json mode
            return c.exit_failure(capture, "copilot", "JSONL events ending in a result line")
        extra: dict[str, Any] = {
            "tokens": _tokens(capture),
            "evidence": {"commands": sum(n in SHELL_TOOLS for n in calls),
                         "tool_calls": len(calls)},
            "session_id": (result or {}).get("sessionId"),
        }
        if error is not None:
            message = str(error.get("message") or error.get("errorType") or "session error")
            if error.get("errorType") == "authentication":
                return TurnResult.failed(AUTH, message, **extra)
            return c.failure(message, c.count(error.get("statusCode")), **extra)
        assert result is not None   # with neither a result nor an error it returned above
        if result.get("exitCode") not in (0, None):
            said = c.error_line(capture.read_stderr())
            said = said or f"copilot finished with exitCode {result['exitCode']}"
            return c.failure(said, **extra)
        return c.answer(answer, "copilot", **extra)


def _ran(data: dict) -> bool:
    """A finished tool call that really ran, whatever its outcome (a missing file is still a
    look); one copilot refused (``code: denied``) or that names no offered tool did not."""
    error = data.get("error") if data.get("success") is False else None
    if not isinstance(error, dict):
        return True
    return error.get("code") != "denied" and not _UNKNOWN_TOOL.match(str(error.get("message")))


def _tokens(capture: Capture) -> dict[str, int]:
    """Summed over the session's usage records, one per model request."""
    sums: dict[str, int] = {}
    for ev in capture.collected_json_lines(SESSION_EVENTS):
        data = ev.get("data") if ev.get("type") == "session.usage_record" else None
        usage = data.get("usage") if isinstance(data, dict) else None
        if not isinstance(usage, dict):
            continue
        given, out = c.count(usage.get("inputTokens")), c.count(usage.get("outputTokens"))
        read = c.count(usage.get("cacheReadTokens"))
        # inputTokens already holds the cache reads, for OpenAI and Anthropic providers alike
        # (measured against a server reporting them apart, as Anthropic's API does)
        for key, n in (("input", given), ("output", out), ("cached", read)):
            if n is not None:
                sums[key] = sums.get(key, 0) + n
    return sums


ADAPTER = Copilot()
