"""Agent CLI adapters, one module per CLI; ``get`` resolves a config ``adapter:`` name."""

from __future__ import annotations

import importlib

from disputatio.adapters.base import Adapter

# adapter name -> module under disputatio.adapters; each module exposes ``ADAPTER``
KNOWN = {
    "claude": "claude",
    "codex": "codex",
    "gemini": "gemini",
    "copilot": "copilot",
    "pi": "pi",
    "agy": "agy",
    "command": "command",
    "simulated": "simulated",
}


def get(name: str) -> Adapter:
    """The adapter for a config name; modules load lazily so startup stays fast."""
    module = importlib.import_module(f"disputatio.adapters.{KNOWN[name]}")
    return module.ADAPTER
