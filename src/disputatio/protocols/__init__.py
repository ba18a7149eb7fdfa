"""Debate protocols: pure functions from the debate's state to what runs next.

A protocol does no I/O and imports nothing that does. Each one is a module with a
``next_step(state) -> Step | Done``; a new protocol is one new file registered here.
"""

from __future__ import annotations

import importlib

from disputatio.protocols.base import Done, Step, TurnSpec  # noqa: F401

KNOWN = {"disputatio": "disputatio.protocols.disputatio",
         "committee": "disputatio.protocols.committee",
         "wind-wall-door": "disputatio.protocols.wind_wall_door"}


def get(name: str):
    return importlib.import_module(KNOWN[name])
