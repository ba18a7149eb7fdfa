"""The ``simulated`` adapter: runs ``disputatio/simulated.py`` in a real subprocess, prompt on
stdin, so a demo exercises the same transport, ledger and parsing as a real CLI."""

from __future__ import annotations

import sys

from disputatio import __version__
from disputatio import simulated as script
from disputatio.adapters import kit as c
from disputatio.adapters.base import (
    API_ERROR,
    EMPTY,
    UNPARSEABLE,
    Capture,
    Invocation,
    TurnRequest,
    TurnResult,
)

# Imported rather than run by its path, so its bytecode is read from __pycache__ instead of being
# compiled at every start (where the package's directory is not writable, it is compiled as a
# script would be). Its path comes first among the arguments, so a process list names it, and
# its directory is searched last, so nothing there can stand in for a standard module.
START = ("import os,sys;sys.path.append(os.path.dirname(sys.argv.pop(1)));"
         "import simulated;sys.exit(simulated.main())")


class Simulated(c.BasicAdapter):
    name = "simulated"
    vendor = "simulated"
    kind = c.SIMULATED
    default_bin = sys.executable
    tested_version = __version__
    version_args = ()  # nothing to probe: it is part of disputatio

    def build(self, request: TurnRequest) -> Invocation:
        # the persona rides where a real CLI's model would
        persona = request.model or "participant"
        # isolated (-I) and without site-packages (-S): it needs only the standard library, and
        # each turn starts an interpreter, so its start-up is kept short
        argv = (request.bin, "-I", "-S", "-c", START, script.__file__, persona,
                *request.extra_args)
        return c.invocation(request, argv)

    def parse(self, capture: Capture) -> TurnResult:
        failed = c.preflight(capture)
        if failed:
            return failed
        if capture.exit_code:
            err = capture.read_stderr().strip().splitlines()
            return TurnResult.failed(API_ERROR, err[-1] if err else f"exit {capture.exit_code}")
        result = c.result_line(capture)
        if result is None:
            return TurnResult.failed(UNPARSEABLE, "no result line on stdout")
        text = str(result.get("text", ""))
        if not text.strip():
            return TurnResult.failed(EMPTY, "the simulated participant answered nothing")
        return TurnResult(ok=True, text=text, cost_usd=result.get("cost_usd"),
                          tokens=dict(result.get("tokens") or {}), evidence={"commands": 0})


ADAPTER = Simulated()
