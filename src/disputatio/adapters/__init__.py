"""The adapter registry: the one list of agent CLI adapters, which config validation, vendor
names, the doctor, ``--init`` and the tests all read.

Each adapter module declares its own facts (name, vendor, kind, default binary, tested version,
version probe, state dirs; see ``kit.BasicAdapter``) and ends with ``ADAPTER = <Class>()``; this
file only names the module. Names are known without importing anything, so validating a config
stays cheap; a module is imported when its adapter is first asked for. An entry is a dotted path
so that adapters from other packages (entry points, later) can join the same table.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from disputatio.adapters.base import Adapter

# What an adapter is, for what disputatio derives from it (``Adapter.kind``).
AGENT = "agent"          # an agent CLI of a named vendor: vendors grouped, ``--init`` finds it
CUSTOM = "custom"        # any CLI the config describes: its vendor is unknown
SIMULATED = "simulated"  # part of disputatio: no model is called
KINDS = (AGENT, CUSTOM, SIMULATED)

# config ``adapter:`` name -> the module whose ``ADAPTER`` it is; the order is the order shown
# to users (known adapters in errors, ``--init``'s search, the docs)
KNOWN: dict[str, str] = {
    "claude": "disputatio.adapters.claude",
    "codex": "disputatio.adapters.codex",
    "gemini": "disputatio.adapters.gemini",
    "copilot": "disputatio.adapters.copilot",
    "pi": "disputatio.adapters.pi",
    "agy": "disputatio.adapters.agy",
    "command": "disputatio.adapters.command",
    "simulated": "disputatio.adapters.simulated",
}


def names() -> tuple[str, ...]:
    """Every adapter name a config may use, without importing any adapter."""
    return tuple(KNOWN)


def get(name: str) -> Adapter:
    """The adapter for a config name (KeyError for an unknown one)."""
    return importlib.import_module(KNOWN[name]).ADAPTER


def every() -> list[Adapter]:
    """Every registered adapter, in registry order."""
    return [get(name) for name in KNOWN]


def agents(*, tested: bool = False) -> list[Adapter]:
    """The agent CLIs of a named vendor (``kind == "agent"``); with ``tested``, only those proven
    against a real binary here (a ``tested_version``): what ``--init`` looks for and the real
    test tier installs."""
    return [a for a in every()
            if a.kind == AGENT and (a.tested_version is not None or not tested)]
