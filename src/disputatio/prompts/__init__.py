"""Prompt templates live here as package data (``<name>.md``); ``render`` fills them in.

Templates use ``$name`` placeholders (string.Template), so braces and code in a quaestio or a
transcript pass through untouched.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template


@cache
def _template(name: str) -> Template:
    text = resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")
    return Template(text)


def render(name: str, variables: dict[str, str]) -> str:
    return _template(name).safe_substitute(variables)
