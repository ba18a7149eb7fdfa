"""GitHub Copilot CLI (``copilot --output-format json``), proven against 1.0.102.

The prompt goes on stdin with no ``-p``: ``-p`` takes the prompt text as its value (argv), while
a piped stdin alone already runs one non-interactive turn (verified against a stub).

Read-only through ``--available-tools``: only view, rg, grep and glob exist for the model (the
grep tool is ``rg`` for OpenAI-family models and ``grep`` for Anthropic-family ones), so a shell
or write call gets "Tool 'bash' does not exist". ``--allow-all-tools`` is passed only together
with that allowlist, to auto-approve those four read tools.
"""

from __future__ import annotations

from disputatio.adapters import _common as c
from disputatio.adapters.base import AUTH, Capture, Invocation, TurnRequest, TurnResult

READ_ONLY_TOOLS = "view,rg,grep,glob"
SHELL_TOOLS = {"bash", "shell", "powershell"}  # none exists under the allowlist: commands = 0


class Copilot:
    name = "copilot"
    vendor = "GitHub"
    default_bin = "copilot"
    tested_version = "1.0.102"
    version_args = ("--version",)

    def build(self, request: TurnRequest) -> Invocation:
        argv = [
            request.bin,
            "--output-format", "json",
            f"--available-tools={READ_ONLY_TOOLS}",
            "--allow-all-tools",  # safe only because of the allowlist above
            "--disable-builtin-mcps",
            "--no-custom-instructions",
            "--no-ask-user",
            "--no-auto-update",
            *c.flag("--model", request.model),
            *c.flag("--reasoning-effort", request.effort),
            *request.extra_args,
        ]
        return c.invocation(request, argv)

    def parse(self, capture: Capture) -> TurnResult:
        failed = c.preflight(capture)
        if failed:
            return failed
        answer = error = result = None
        calls: list[str] = []
        for ev in capture.stdout_json_lines():
            kind, data = ev.get("type"), ev.get("data")
            data = data if isinstance(data, dict) else {}
            if kind == "assistant.message":
                requests = data.get("toolRequests") or []
                calls += [str(r.get("name")) for r in requests if isinstance(r, dict)]
                if not requests:
                    answer = data.get("content")
            elif kind == "session.error":
                error = data
            elif kind == "result":
                result = ev
        if result is None and error is None:
            # no JSON at all: auth problems are plain text on stderr, even in json mode
            return c.exit_failure(capture, "copilot", "JSONL events ending in a result line")
        extra = {
            "evidence": {"commands": sum(n in SHELL_TOOLS for n in calls),
                         "tool_calls": len(calls)},
            "session_id": (result or {}).get("sessionId"),
        }
        if error is not None:
            message = str(error.get("message") or error.get("errorType") or "session error")
            if error.get("errorType") == "authentication":
                return TurnResult.failed(AUTH, message, **extra)
            return c.failure(message, c.count(error.get("statusCode")), **extra)
        if result.get("exitCode") not in (0, None):
            said = c.error_line(capture.read_stderr())
            said = said or f"copilot finished with exitCode {result['exitCode']}"
            return c.failure(said, **extra)
        return c.answer(answer, "copilot", **extra)


ADAPTER = Copilot()
