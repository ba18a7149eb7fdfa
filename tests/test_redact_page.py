"""disputatio redact and the HTML page ``show --open`` left in the debate folder: the page is
a rendering like debate.md, so a redaction renders it again rather than leaving the words in it
(they are marked up there, so looking for the answer's lines would not find them)."""

from __future__ import annotations

import html as stdlib_html

from disputatio import views
from support import invoke

REASON = "named a customer"


def test_the_page_show_open_wrote_is_rendered_again(home, finished):
    debate = finished("--demo", "Should we rewrite the backend in Rust?", "-q")
    # where show --open puts it (--open itself is left out: webbrowser keeps the first
    # $BROWSER it sees for the life of this process, which other tests set)
    page = debate / "debate.html"
    opened = invoke("show", "--format", "html", "--out", str(page), cwd=home)
    assert opened.returncode == 0, opened.stderr
    before = page.read_text(encoding="utf-8")
    assert "Position.</strong> No" in before   # the skeptic's proposal, marked up

    assert invoke("redact", debate.name, "proposal/skeptic", "--reason", REASON,
                  cwd=home).returncode == 0
    after = page.read_text(encoding="utf-8")
    assert after == views.render(debate, "html")
    assert stdlib_html.escape(f"[REDACTED: {REASON}]") in after
    assert "Position.</strong> No" not in after
