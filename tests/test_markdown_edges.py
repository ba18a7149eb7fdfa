"""The markdown subset of the HTML report at its edges: shapes of a heading line that a single
pattern would backtrack on for hours, and the closing hashes a heading may or may not have."""

from __future__ import annotations

import time

import pytest

from disputatio.render.safe_markdown import to_html


@pytest.mark.parametrize("line, tag, last", [
    ("# a" + " " * 99_990 + "b", "h3", "b"),
    ("# a" + " " * 50_000 + "#" * 10 + " " * 49_980 + "b", "h3", "b"),
    ("###### " + " \t" * 49_990 + "x", "h6", "x"),
])
def test_a_heading_with_a_long_run_of_spaces_renders_at_once(line, tag, last):
    # one pattern of lazy text, optional spaces and hashes took 6 s for 2,000 spaces (cubic)
    started = time.perf_counter()
    out = to_html(line)
    assert time.perf_counter() - started < 2.0
    assert out.startswith(f"<{tag}>a") or out.startswith(f"<{tag}>{last}")
    assert out.endswith(f"{last}</{tag}>")


@pytest.mark.parametrize("line, title", [
    ("# Plan ##", "Plan"), ("## Plan   #  ", "Plan"), ("# Use C#", "Use C#"),
    ("# F# and C#", "F# and C#"), ("# ###", ""), ("#   spaced   ", "spaced"),
])
def test_closing_hashes_go_only_after_a_space(line, title):
    out = to_html(line, heading_offset=0)
    assert out == f"<h{line.index(' ')}>{title}</h{line.index(' ')}>"
