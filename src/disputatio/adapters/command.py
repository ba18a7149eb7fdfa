"""Any other agent CLI, described in config instead of code (see docs/adapters.md).

Options (``TurnRequest.options``): ``argv`` — the command line as a list; ``{prompt_file}`` in
an element becomes the path of a file holding the prompt (else the prompt goes on stdin);
``{model}``/``{effort}`` become the participant's model/effort, and when that is not set the
element is dropped, with the flag before it when the element is only the placeholder.
``output`` — ``text`` (default: stdout is the answer) or ``json`` (stdout, or its last JSON
line, is JSON); ``answer_path`` — where the answer sits in that JSON (``choices.0.text``).

``parse`` only sees the finished process, so ``build`` hands ``output``/``answer_path`` over in
``Invocation.context``, which the transport returns as ``Capture.context``.
"""

from __future__ import annotations

import json
from dataclasses import replace

from disputatio.adapters import kit as c
from disputatio.adapters.base import API_ERROR, Capture, Invocation, TurnRequest, TurnResult
from disputatio.adapters.fence import StateDir

PROMPT_FILE = "prompt.md"


class Command(c.BasicAdapter):
    name = "command"
    vendor = "custom"
    kind = c.CUSTOM
    default_bin = ""  # argv[0] of the configured command line
    tested_version = None
    version_args: tuple[str, ...] = ()  # a generic CLI may not answer --version
    state_dirs: tuple[StateDir, ...] = ()  # the user's own command: checkout and temp dir only

    def build(self, request: TurnRequest) -> Invocation:
        template = request.options.get("argv") or [request.bin]
        if not isinstance(template, list | tuple) or not all(isinstance(a, str) for a in template):
            raise ValueError("the command adapter's 'argv' must be a list of strings")
        # the resolved ``bin`` (config ``bin``, else argv[0] found on PATH) is what runs
        argv = [request.bin or template[0]]
        values = {"{model}": request.model, "{effort}": request.effort}
        via_file = False
        for arg in template[1:]:
            if any(k in arg and not v for k, v in values.items()):
                if arg in values and len(argv) > 1 and argv[-1].startswith("-") and argv[-1] != "-":
                    argv.pop()  # "--model {model}" without a model: drop the pair
                continue
            for key, value in values.items():
                if value:
                    arg = arg.replace(key, value)
            if "{prompt_file}" in arg:
                via_file = True
                arg = arg.replace("{prompt_file}", "{scratch}/" + PROMPT_FILE)
            argv.append(arg)
        settings = {"output": request.options.get("output") or "text",
                    "answer_path": request.options.get("answer_path")}
        files = {PROMPT_FILE: request.prompt.encode("utf-8")} if via_file else {}
        inv = c.invocation(request, [*argv, *request.extra_args], prompt_on_stdin=not via_file,
                           files=files)
        return replace(inv, context=settings)

    def parse(self, capture: Capture) -> TurnResult:
        failed = c.preflight(capture)
        if failed:
            return failed
        if capture.exit_code:
            said = _last_line(capture.read_stderr()) or _last_line(capture.read_stdout())
            said = said or f"the command exited with {capture.exit_code}"
            return TurnResult.failed(API_ERROR, said)
        settings = capture.context
        out = capture.read_stdout()
        if settings.get("output") != "json":
            return c.answer(c.clean(out), "the command")
        data = _json(out)
        if data is None:
            return c.unparseable("the command", "JSON on stdout (all of it, or its last line)", out)
        path = settings.get("answer_path")
        if path:
            try:
                data = c.dig(data, str(path))
            except LookupError as exc:
                return c.unparseable("the command", f"an answer at '{path}' ({exc})", out)
        if data is not None and not isinstance(data, str):
            wanted = "a string at 'answer_path'" if path else "a JSON string, or an 'answer_path'"
            return c.unparseable("the command", wanted, out)
        return c.answer(data, "the command")


def _json(text: str) -> object | None:
    try:
        return json.loads(text)
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        if not line.lstrip().startswith(("{", "[")):
            continue
        try:
            return json.loads(line)
        except ValueError:
            continue
    return None


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in c.clean(text).splitlines() if ln.strip()]
    return lines[-1] if lines else ""


ADAPTER = Command()
