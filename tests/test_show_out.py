"""disputatio show --out given something it cannot write: one line, exit 2, nothing left."""

from __future__ import annotations

import pytest

from support import invoke
from support.ledgers import RESOLVED, place


@pytest.mark.parametrize("given, says", [
    ("sub", "error: --out sub: a directory; name the file to write"),
    (".", "error: --out .: a directory; name the file to write"),
    ("missing/page.html", "error: --out missing/page.html: cannot write it: No such file or "
                          "directory"),
])
def test_an_out_that_cannot_be_written_is_one_line_and_exit_2(home, given, says):
    place(home, RESOLVED, "20261101T100000Z")
    (home / "sub").mkdir()
    before = sorted(p.name for p in home.iterdir())
    ran = invoke("show", "--format", "html", "--out", given, cwd=home)
    assert (ran.returncode, ran.stdout, ran.stderr.strip()) == (2, "", says)
    # no half-written temporary file beside it
    assert sorted(p.name for p in home.iterdir()) == before
    assert list((home / "sub").iterdir()) == []
