"""The console entry point. It imports nothing heavy before it has a handler for Ctrl-C,
SIGTERM and SIGHUP, so a signal while typer, pydantic and the CLI load is one line and exit
130 too, not a KeyboardInterrupt traceback (``cli.main`` takes over the signals once it runs)."""

from __future__ import annotations

import os
import signal
import sys


def _interrupted_while_loading(signum, frame) -> None:
    # nothing has started yet: no agent, no file, no debate; there is nothing to clean up
    sys.stderr.write("error: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


def stop_signals() -> tuple[signal.Signals, ...]:
    """Ctrl-C, SIGTERM and the terminal closing (SIGHUP, unless the user ignores it, as
    ``nohup`` does): each stops the command the same way, cleaning up behind it."""
    hup = getattr(signal, "SIGHUP", None)
    keep_hup = hup is not None and signal.getsignal(hup) is not signal.SIG_IGN
    return (signal.SIGINT, signal.SIGTERM, *((hup,) if keep_hup else ()))


def main() -> None:
    for sig in stop_signals():
        signal.signal(sig, _interrupted_while_loading)
    from disputatio.cli import main as cli_main

    cli_main()
