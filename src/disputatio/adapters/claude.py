"""Claude Code (``claude -p``), proven against 2.1.197 (see docs/adapters.md).

Read-only by construction: ``--tools`` offers only Read, Grep, Glob and Bash; ``--allowedTools``
pre-approves the few Bash commands a reviewer needs (git inspection, test runners) and
``--permission-mode dontAsk`` denies every other call without asking. Write and Edit are never
offered. ``--setting-sources user`` keeps the checkout's own ``.claude/settings.json`` (hooks,
allow rules) out of the turn while keeping the user's login and preferences.

Success is ``is_error == false`` on the result object, never ``subtype``: 2.1.197 says
``subtype:"success"`` on auth and API errors too.
"""

from __future__ import annotations

import json

from disputatio.adapters import _common as c
from disputatio.adapters.base import BUDGET, Capture, Invocation, TurnRequest, TurnResult

BUILTIN_TOOLS = "Read,Grep,Glob,Bash"
# Bash commands auto-approved under dontAsk; anything else the model tries is denied.
# "Bash(x *)" is the rule syntax the tested version's own --help shows ("Bash(git *)").
READ_ONLY_BASH = (
    "git diff", "git log", "git show", "git status", "git grep", "git blame",
    "pytest", "python -m pytest", "python3 -m pytest", "npm test", "go test", "cargo test",
)
ALLOWED_TOOLS = ",".join(f"Bash({cmd} *)" for cmd in READ_ONLY_BASH)
# git diff/log/show --output=FILE writes a file; deny rules win over allow rules
DENIED_TOOLS = "Bash(git *--output*)"
NO_MCP = json.dumps({"mcpServers": {}}, separators=(",", ":"))


class Claude:
    name = "claude"
    vendor = "Anthropic"
    default_bin = "claude"
    tested_version = "2.1.197"
    version_args = ("--version",)

    def build(self, request: TurnRequest) -> Invocation:
        # Each variadic option (--tools, --allowedTools, --disallowedTools, --mcp-config) is
        # followed by another option so none can swallow a later argument. Prompt on stdin.
        argv = [
            request.bin, "-p",
            "--tools", BUILTIN_TOOLS,
            "--allowedTools", ALLOWED_TOOLS,
            "--disallowedTools", DENIED_TOOLS,
            "--mcp-config", NO_MCP,
            "--strict-mcp-config",
            "--permission-mode", "dontAsk",
            "--setting-sources", "user",
            # sessions are keyed by cwd and the checkout is thrown away: nothing to resume
            "--no-session-persistence",
            "--output-format", "json",
            *c.flag("--model", request.model),
            *c.flag("--effort", request.effort),
            *c.flag("--max-budget-usd", request.max_budget_usd),
            *request.extra_args,
        ]
        return c.invocation(request, argv)

    def parse(self, capture: Capture) -> TurnResult:
        failed = c.preflight(capture)
        if failed:
            return failed
        result = None
        for obj in capture.stdout_json_lines():
            if obj.get("type") == "result":
                result = obj
        if result is None:
            return c.exit_failure(capture, "claude", "a JSON result object on stdout")
        if not isinstance(result.get("is_error"), bool):
            return c.unparseable("claude", "a result object with is_error", json.dumps(result))
        extra = {
            "cost_usd": result.get("total_cost_usd"),
            "tokens": _tokens(result),
            "evidence": c.reported(
                turns=c.count(result.get("num_turns")),
                denied=len(result.get("permission_denials") or []),
            ),
            "session_id": result.get("session_id"),
        }
        if result.get("is_error") is False:
            return c.answer(result.get("result"), "claude", **extra)
        # error subtypes carry no "result" but an "errors" list
        message = str(result.get("result") or "; ".join(map(str, result.get("errors") or [])))
        message = message or f"claude reported an error ({result.get('subtype')})"
        if result.get("subtype") == "error_max_budget_usd":
            return TurnResult.failed(BUDGET, message, **extra)
        return c.failure(message, c.count(result.get("api_error_status")), **extra)


def _tokens(result: dict) -> dict[str, int]:
    """From ``modelUsage`` (every model the turn used, side requests included; it matches
    ``total_cost_usd`` and stays filled on error subtypes, where 2.1.197 zeroes ``usage``),
    else from ``usage``."""
    models = [m for m in (result.get("modelUsage") or {}).values() if isinstance(m, dict)]
    if models:
        rows = [(m.get("inputTokens"), m.get("outputTokens"), m.get("cacheReadInputTokens"),
                 m.get("cacheCreationInputTokens")) for m in models]
    else:
        u = result.get("usage") or {}
        rows = [(u.get("input_tokens"), u.get("output_tokens"), u.get("cache_read_input_tokens"),
                 u.get("cache_creation_input_tokens"))]
    if all(c.count(v) is None for row in rows for v in row[:2]):
        return {}
    columns = zip(*rows, strict=True)
    fresh, out, read, written = (sum(c.count(v) or 0 for v in col) for col in columns)
    return {"input": fresh + read + written, "output": out, "cached": read}

ADAPTER = Claude()
