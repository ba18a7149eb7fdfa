"""Gemini CLI (``gemini -p "" -o json``), proven against 0.61.0 (see docs/adapters.md).

The prompt goes on stdin. ``-p`` text is appended to stdin input, so ``-p ""`` adds nothing
while still forcing headless mode whatever the terminal looks like (verified against a stub).

Read-only through ``--approval-mode plan``: a policy-engine mode that denies every write
outside the CLI's own plans directory even if the user's settings auto-approve tools, which
the default mode's "headless offers no write tools" behaviour does not promise. Plan mode alone
has a way out: ``write_file plan.md`` (allowed into the plans folder), then ``exit_plan_mode``
("Plan approved. Switching to YOLO mode") offers ``run_shell_command``. An admin policy
(``--admin-policy``, the tier no user or workspace policy overrides) therefore denies leaving
plan mode and every tool that writes or runs commands; denied tools are not even offered.

Output: success is one pretty-printed JSON object on stdout. Failures are a JSON
``{"error": {...}}`` on stderr, possibly after log lines and stack traces; the exit code is the
HTTP status mod 256 (401 → 145) or a fixed code (41 = auth).
"""

from __future__ import annotations

from types import MappingProxyType

from disputatio.adapters import kit as c
from disputatio.adapters.base import AUTH, Capture, TurnResult
from disputatio.adapters.fence import StateDir

# fixed exit codes meaning "your credentials": 41 FatalAuthenticationError, 401/403 mod 256
AUTH_EXITS = {41, 401 % 256, 403 % 256}
POLICY_FILE = "gemini-admin-policy.toml"
DENIED_TOOLS = ("exit_plan_mode", "write_file", "replace", "run_shell_command")
ADMIN_POLICY = f"""\
[[rule]]
toolName = [{", ".join(f'"{t}"' for t in DENIED_TOOLS)}]
decision = "deny"
priority = 999
denyMessage = "Read-only turn: answer in text; no file writes, commands or leaving plan mode."
"""


class Gemini(c.BasicAdapter):
    name = "gemini"
    vendor = "Google"
    package = "@google/gemini-cli"
    tested_version = "0.61.0"
    # GEMINI_CLI_HOME is a home that holds .gemini/ (settings, chats, logs)
    state_dirs = (StateDir("GEMINI_CLI_HOME", ("~/.gemini",), subdir=".gemini"),)
    args = (
        "-p", "",
        "-o", "json",
        "--approval-mode", "plan",
        "--admin-policy", f"{{scratch}}/{POLICY_FILE}",
    )
    model_flag = "-m"
    # No effort flag exists in 0.61 (thinking is a settings-file matter): effort is ignored.
    effort_flag = None
    # an untrusted checkout would exit 55 before the first request
    env = MappingProxyType({"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    files = MappingProxyType({POLICY_FILE: ADMIN_POLICY.encode()})

    def parse(self, capture: Capture) -> TurnResult:
        failed = c.preflight(capture)
        if failed:
            return failed
        out = c.last_json_object(capture.read_stdout()) or {}
        err = out if "error" in out else c.last_json_object(capture.read_stderr()) or {}
        stats = out.get("stats") or {}
        extra = {
            "tokens": _tokens(stats.get("models") or {}),
            "evidence": _evidence(stats.get("tools") or {}),
            "session_id": out.get("session_id") or err.get("session_id"),
        }
        if "response" in out and "error" not in out:
            return c.answer(out.get("response"), "gemini", **extra)
        error = err.get("error")
        if isinstance(error, dict):
            message = str(error.get("message") or error.get("type") or "gemini reported an error")
            code = c.count(error.get("code"))
            if code == 41 or capture.exit_code in AUTH_EXITS:
                return TurnResult.failed(AUTH, message, **extra)
            return c.failure(message, code if code and code >= 100 else None, **extra)
        if capture.exit_code in AUTH_EXITS:
            said = c.error_line(capture.read_stderr()) or f"gemini exited {capture.exit_code}"
            return TurnResult.failed(AUTH, said, **extra)
        return c.exit_failure(capture, "gemini", "a JSON object with 'response' on stdout")


def _tokens(models: dict) -> dict[str, int]:
    """Summed over every model the turn used (the router's calls included)."""
    sums: dict[str, int] = {}
    for m in models.values():
        t = (m or {}).get("tokens") or {}
        for ours, theirs in (("input", "prompt"), ("output", "candidates"),
                             ("cached", "cached"), ("reasoning", "thoughts")):
            n = c.count(t.get(theirs))
            if n is not None:
                sums[ours] = sums.get(ours, 0) + n
    return sums


def _evidence(tools: dict) -> dict[str, int]:
    """Calls that ran. gemini counts every call, also one plan mode denied or of a tool it
    does not offer; those carry no decision, while every call that ran was accepted (by the
    policy or a user) — a read of a missing file included."""
    by_name = tools.get("byName")
    if not isinstance(by_name, dict):
        return c.reported(tool_calls=c.count(tools.get("totalCalls")))
    ran = {name: _accepted(stats) for name, stats in by_name.items() if isinstance(stats, dict)}
    return {"tool_calls": sum(ran.values()), "commands": ran.get("run_shell_command", 0)}


def _accepted(stats: dict) -> int:
    decisions = stats.get("decisions")
    if not isinstance(decisions, dict):   # a gemini without decisions: every call counts
        return c.count(stats.get("count")) or 0
    return sum(c.count(decisions.get(k)) or 0 for k in ("accept", "auto_accept", "modify"))


ADAPTER = Gemini()
