"""Google Antigravity CLI (``agy --print``). NOT verified against a real binary: agy is not on
npm, so this follows public third-party reports only (see docs/adapters.md).

Reported facts this relies on: ``-p``/``--print`` is a string flag whose value is the prompt;
agy ignores a piped stdin; output is plain text on stdout; ``--print-timeout`` takes a Go
duration and defaults to 5m; ``--sandbox`` restricts the terminal tool; without
``--dangerously-skip-permissions`` tool calls need an approval that print mode cannot give.

The prompt rides in argv as ``--print=<prompt>`` (attached, so a prompt starting with ``-``
cannot be mistaken for a flag) while it is small. Linux caps one argument at 128 KiB, so a
larger prompt is written to ``{scratch}/prompt.md`` and ``--print`` asks agy to read it, with
``--add-dir`` granting access to that directory.
"""

from __future__ import annotations

import math
import re

from disputatio.adapters import kit as c
from disputatio.adapters.base import AUTH, Capture, Invocation, TurnRequest, TurnResult
from disputatio.adapters.fence import StateDir

INLINE_LIMIT = 100_000  # bytes; well under the kernel's 131072-byte MAX_ARG_STRLEN
PROMPT_FILE = "prompt.md"
# printed by an unauthenticated agy, reportedly with exit 0
_AUTH = re.compile(
    r"authentication required|authentication timed out|unauthenticated|not logged in"
    r"|ineligibletier|fatalauthenticationerror",
    re.IGNORECASE,
)


class Agy(c.BasicAdapter):
    name = "agy"
    vendor = "Google"
    tested_version = None  # never run here; agy is not on npm (no ``package``)
    state_dirs = (StateDir(None, ("~/.gemini",)),)  # reported, not verified

    def build(self, request: TurnRequest) -> Invocation:
        argv = [request.bin, "--sandbox"]
        if request.timeout_s:
            # one minute past ours, so our timeout (a clean ``timeout``) always fires first and
            # agy's 5m default never cuts a long turn short
            argv += ["--print-timeout", f"{math.ceil(request.timeout_s / 60) + 1}m"]
        argv += [*c.flag("--model", request.model), *request.extra_args]
        data = request.prompt.encode("utf-8")
        if len(data) <= INLINE_LIMIT:
            return c.invocation(request, [*argv, f"--print={request.prompt}"],
                                prompt_on_stdin=False)
        path = "{scratch}/" + PROMPT_FILE
        ask = (f"Your complete task is in the file {path}. Read that whole file first, then "
               "follow its instructions exactly; your reply is the answer it asks for.")
        return c.invocation(request, [*argv, "--add-dir", "{scratch}", f"--print={ask}"],
                            prompt_on_stdin=False, files={PROMPT_FILE: data})

    def parse(self, capture: Capture) -> TurnResult:
        failed = c.preflight(capture)
        if failed:
            return failed
        out = c.clean(capture.read_stdout())
        err = c.error_line(capture.read_stderr())
        first = next((ln.strip() for ln in out.splitlines() if ln.strip()), "")
        if capture.exit_code:
            return c.failure(err or first or f"agy exited with {capture.exit_code}")
        # a login prompt instead of an answer; an answer merely mentioning auth starts otherwise
        if _AUTH.search(first) or (not first and _AUTH.search(err)):
            return TurnResult.failed(AUTH, first or err)
        return c.answer(out, "agy")


ADAPTER = Agy()
