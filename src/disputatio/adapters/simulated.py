"""The ``simulated`` adapter: runs ``python -m disputatio.simulated`` as a real subprocess,
prompt on stdin, so a demo exercises the same transport, ledger and parsing as a real CLI."""

from __future__ import annotations

import sys

from disputatio import __version__
from disputatio.adapters.base import (
    API_ERROR,
    EMPTY,
    UNPARSEABLE,
    Capture,
    Invocation,
    TurnRequest,
    TurnResult,
    process_failure,
    signal_failure,
)
from disputatio.adapters.fence import StateDir


class Simulated:
    name = "simulated"
    vendor = "simulated"
    default_bin = sys.executable
    tested_version = __version__
    version_args: tuple[str, ...] = ()  # nothing to probe: it is part of disputatio
    state_dirs: tuple[StateDir, ...] = ()

    def build(self, request: TurnRequest) -> Invocation:
        persona = request.model or "participant"
        argv = (request.bin, "-m", "disputatio.simulated", persona, *request.extra_args)
        return Invocation(argv=argv, env=dict(request.env), stdin=request.prompt.encode())

    def parse(self, capture: Capture) -> TurnResult:
        failed = process_failure(capture) or signal_failure(capture)
        if failed:
            return failed
        if capture.exit_code:
            err = capture.read_stderr().strip().splitlines()
            return TurnResult.failed(API_ERROR, err[-1] if err else f"exit {capture.exit_code}")
        result = None
        for obj in capture.stdout_json_lines():
            if obj.get("type") == "result":
                result = obj
        if result is None:
            return TurnResult.failed(UNPARSEABLE, "no result line on stdout")
        text = str(result.get("text", ""))
        if not text.strip():
            return TurnResult.failed(EMPTY, "the simulated participant answered nothing")
        return TurnResult(ok=True, text=text, cost_usd=result.get("cost_usd"),
                          tokens=dict(result.get("tokens") or {}), evidence={"commands": 0})


ADAPTER = Simulated()
