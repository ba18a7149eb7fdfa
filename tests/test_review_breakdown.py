"""A review that breaks down — a disk error, a bug — reached no verdict: exit 3, never 1 (which
says the change has failing findings), and 0 with --fail-open, saying so loudly."""

from __future__ import annotations

import errno

import pytest

from disputatio import review
from support import invoke


@pytest.mark.parametrize("error", [RuntimeError("boom"),
                                   OSError(errno.ENOSPC, "No space left on device", "x")])
def test_a_review_that_breaks_down_exits_3(home, monkeypatch, error):
    def broken(*args, **kwargs):
        raise error
    monkeypatch.setattr(review, "command", broken)
    ran = invoke("review", "--base", "main", cwd=home)
    assert ran.returncode == 3, ran.stderr
    assert ran.stderr.startswith("error: ") and ran.stderr.rstrip().endswith("(no verdict)")
    assert len(ran.stderr.strip().splitlines()) == 1


def test_fail_open_passes_a_broken_review_loudly(home, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr(review, "command", broken)
    ran = invoke("review", "--base", "main", "--fail-open", cwd=home)
    assert ran.returncode == 0
    assert "warning: FAIL-OPEN" in ran.stderr and "boom" in ran.stderr


def test_a_debate_that_breaks_down_still_exits_1(home, monkeypatch):
    from disputatio import app

    def broken(*args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr(app, "run", broken)
    ran = invoke("--demo", "q", cwd=home)
    assert ran.returncode == 1 and "internal error" in ran.stderr
