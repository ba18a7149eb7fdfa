"""Claude Code (``claude -p``), proven against 2.1.197 (see docs/adapters.md).

Read-only by construction: ``--tools`` offers only Read, Grep, Glob and Bash; ``--allowedTools``
pre-approves the few Bash commands a reviewer needs (git inspection, test runners),
``--disallowedTools`` refuses their argument forms that write or run another program, and
``--permission-mode dontAsk`` denies every other call without asking. Write and Edit are never
offered. ``--setting-sources user`` keeps the checkout's own ``.claude/settings.json`` (hooks,
allow rules) out of the turn while keeping the user's login and preferences.

Success is ``is_error == false`` on the result object, never ``subtype``: 2.1.197 says
``subtype:"success"`` on auth and API errors too.
"""

from __future__ import annotations

import json

from disputatio.adapters import kit as c
from disputatio.adapters.base import BUDGET, Capture, TurnResult
from disputatio.adapters.fence import StateDir

BUILTIN_TOOLS = "Read,Grep,Glob,Bash"
# What each pre-approved Bash command may not contain. A deny rule beats an allow rule, and "*"
# in a rule matches anything. Rules see the raw command, so quoting, escapes and brace
# expansion are refused first (``--out''put=/x`` is ``--output=/x`` to the shell); what
# remains is what the shell runs. Flags close only the forms known here: a test runner runs
# the repository's own code, which only the OS fence confines.
UNQUOTED = ("'", '"', "\\", "{", "`")
# a path outside the checkout, or a variable (``./...`` is go's "every package below")
OUTSIDE = (" /", "=/", ":/", "~", "$", " ..", "=..", "../")
GIT = (
    *UNQUOTED,
    "--output",    # diff/log/show/blame --output=FILE writes FILE
    "--ext-diff",  # runs the configured external diff program
)
PYTEST = (
    "--junit", "--basetemp", "--debug", "--log-file", "--report-log", "--result-log",
    "--resultlog", "--override-ini", " -o", "--rootdir", "--confcutdir", " -c",
    "--config-file", "--cov-report", *UNQUOTED, *OUTSIDE,
)
GO = ("-o", "exec", "profile", "-trace", "-pkgdir", "-modfile", *UNQUOTED, *OUTSIDE)
CARGO = ("--config", " -Z", "--target-dir", "--manifest-path", "--out-dir", "--artifact-dir",
         "--lockfile-path", *UNQUOTED, *OUTSIDE)
# Bash commands auto-approved under dontAsk (the rule syntax of the tested version's --help,
# "Bash(git *)"), with what each may not contain; anything else the model tries is denied.
# No ``git grep``: -O/--open-files-in-pager runs any command and git accepts it abbreviated
# and bundled (--open=CMD, -nOCMD), which no pattern can list; the Grep tool searches instead.
# npm reads any --key=value as config and expands abbreviations, so only ``npm test`` bare or
# with arguments after "--" (which go to the test script) is approved.
READ_ONLY_BASH: dict[str, tuple[str, ...]] = {
    "git diff *": GIT, "git log *": GIT, "git show *": GIT, "git status *": GIT,
    "git blame *": GIT,
    "pytest *": PYTEST, "python -m pytest *": PYTEST, "python3 -m pytest *": PYTEST,
    "npm test": (), "npm test -- *": (*UNQUOTED, *OUTSIDE),
    "go test *": GO, "cargo test *": CARGO,
}
ALLOWED_TOOLS = ",".join(f"Bash({rule})" for rule in READ_ONLY_BASH)
# A backslash in the command is matched by four in the rule (measured with 2.1.197: one or
# two match nothing).
DENIED_TOOLS = ",".join(
    f"Bash({rule.removesuffix(' *')}*{arg.replace(chr(92), chr(92) * 4)}*)"
    for rule, denied in READ_ONLY_BASH.items() for arg in denied
)
NO_MCP = json.dumps({"mcpServers": {}}, separators=(",", ":"))


class Claude(c.BasicAdapter):
    name = "claude"
    vendor = "Anthropic"
    package = "@anthropic-ai/claude-code"
    tested_version = "2.1.197"
    # its login, settings and session files (CLAUDE_CONFIG_DIR holds .claude.json when set).
    # Not ~/.claude.json: claude saves it only through a lock dir, a temp file and a rename in
    # HOME, never in place, so a grant of the file serves claude nothing and lets an agent
    # rewrite it (MCP servers that run unfenced the next time the user runs claude)
    state_dirs = (StateDir("CLAUDE_CONFIG_DIR", ("~/.claude",)),)
    # Each variadic option (--tools, --allowedTools, --disallowedTools, --mcp-config) is followed
    # by another option so none can swallow a later argument. Prompt on stdin.
    args = (
        "-p",
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
    )
    effort_flag = "--effort"
    budget_flag = "--max-budget-usd"

    def parse(self, capture: Capture) -> TurnResult:
        failed = c.preflight(capture)
        if failed:
            return failed
        result = c.result_line(capture)
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
