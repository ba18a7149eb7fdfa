"""Prompt templates live here as package data (``<name>.md``); ``render`` fills them in.

Templates use ``$name`` placeholders (string.Template), so braces and code in a quaestio or a
transcript pass through untouched. ``$_part`` takes in the template ``_part.md``: one text that
heads many prompts stays byte-identical in all of them, which a provider's prefix cache needs.
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
    template = _template(name)
    parts = {k: render(k, variables) for k in template.get_identifiers() if k.startswith("_")}
    return template.safe_substitute({**variables, **parts})
