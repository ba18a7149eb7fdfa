"""How a use case ends, in terms every face (the CLI today) reports the same way.

A use case returns an ``Outcome`` or raises one of the errors below; ``failure`` turns an error
into its one line and exit code, so no face keeps its own table. The codes are documented in the
README: 0 done (a judge that needs input included), 1 the debate failed or was aborted (or a
ledger or a CLI is broken), 2 a usage or configuration error, 75 the debate is in use by another
disputatio process, 130 interrupted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from disputatio.ledger import Busy

__all__ = ["EXIT_BUSY", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE",
           "BrokenLedger", "Busy", "Outcome", "UsageError", "failure"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_BUSY, EXIT_INTERRUPTED = 0, 1, 2, 75, 130


@dataclass
class Outcome:
    """What a command ended in: its exit code, the artifact to name on stdout (if any), a status
    word and a message for the user (empty: nothing to say)."""

    code: int
    path: Path | None = None
    status: str = ""
    message: str = ""


class UsageError(Exception):
    """A problem with what the user asked for: one line, exit 2, nothing run."""


class BrokenLedger(Exception):
    """The ledger does not verify: nothing is appended to it; one line, exit 1."""


# Busy (another process is writing the debate: one line, exit 75) is raised by the ledger's
# writer lock and re-exported here with the others.


def failure(exc: BaseException) -> tuple[str, int] | None:
    """The one line and the exit code for an error a use case may end in; None for anything
    else, which is a bug. Config and workspace errors are usage errors: the user's file or
    repository is what has to change."""
    if isinstance(exc, UsageError):
        return str(exc), EXIT_USAGE
    if isinstance(exc, BrokenLedger):
        return str(exc), EXIT_FAILED
    if isinstance(exc, Busy):
        return str(exc), EXIT_BUSY
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", EXIT_INTERRUPTED
    # imported here: loading the lineup's models is the slow part of starting up, and a
    # command that never read a config (--verify) should not pay for it to report an error
    from disputatio.config import ConfigError
    from disputatio.gitenv import WorkspaceError

    if isinstance(exc, ConfigError | WorkspaceError):
        return str(exc), EXIT_USAGE
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if exc.filename else ""
        return f"cannot access{where}: {exc.strerror or exc}", EXIT_FAILED
    return None
