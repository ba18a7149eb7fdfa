"""Pure views of the ledger: every artifact in a debate folder is rendered from events alone."""

from __future__ import annotations

from disputatio.render.report import Artifacts, render_all  # noqa: F401
