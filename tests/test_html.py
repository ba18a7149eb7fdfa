"""The HTML report: one self-contained page in which no foreign text becomes markup.

Every page is parsed back with the standard library's HTML parser, and what it holds is checked
against what our renderer can emit: a fixed set of tags and attributes, links only to http(s),
one stylesheet (allowed by its hash), and nothing else. The browser tests
(tests/browser/test_report.py) show the same pages do not run or fetch anything.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from disputatio import ledger, views
from disputatio.render import html, summary
from disputatio.render.safe_markdown import to_html
from support.hostile_answers import HOSTILE, MEGABYTE_LINE, debate_with

FIXTURES = Path(__file__).parent / "fixtures" / "ledgers"
# everything the renderer may emit; an agent's text adds none
TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4",
        "h5", "h6", "dl", "dt", "dd", "span", "section", "ul", "ol", "li", "article", "div",
        "p", "br", "pre", "code", "em", "strong", "a", "blockquote", "hr", "footer"}
ATTRIBUTES = {"lang", "charset", "http-equiv", "content", "name", "class", "id", "href", "rel",
              "data-turn-id", "data-document"}


class Page(HTMLParser):
    """What a page is made of: its tags with their attributes, its text, its stylesheet."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.style = ""
        self._in_style = False
        self.feed(source)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.style += data
        else:
            self.text.append(data)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag]


def assert_inert(page: str) -> Page:
    """Only our markup: known tags and attributes, no handler, http(s) links only, one
    stylesheet allowed by its hash and a policy that allows nothing else."""
    parsed = Page(page)
    assert {t for t, _ in parsed.tags} <= TAGS
    for tag, attrs in parsed.tags:
        assert set(attrs) <= ATTRIBUTES, (tag, attrs)
        assert not any(k.startswith("on") for k in attrs)
        if "href" in attrs:
            assert re.match(r"https?://", attrs["href"] or ""), attrs
    assert len(parsed.all("style")) == 1
    policy = [a["content"] for a in parsed.all("meta")
              if a.get("http-equiv") == "Content-Security-Policy"]
    digest = base64.b64encode(hashlib.sha256(parsed.style.encode()).digest()).decode()
    assert policy == [f"default-src 'none'; style-src 'sha256-{digest}'; img-src 'none'; "
                      "base-uri 'none'; form-action 'none'"]
    # a second look, without the parser: every "<" in the page opens one of our tags
    opened = {m.lower() for m in re.findall(r"<(?:/)?([A-Za-z!][A-Za-z0-9-]*)", page)}
    assert opened <= TAGS | {"!doctype"}
    return parsed


def text_of(parsed: Page) -> str:
    return "".join(parsed.text)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_answer_is_text_not_markup(tmp_path, name):
    path = debate_with(tmp_path / "d", {name: HOSTILE[name]})
    parsed = assert_inert(views.render(path, "html"))
    shown = text_of(parsed)
    if name in ("script", "img-onerror", "iframe", "style-breakout", "meta-refresh"):
        assert HOSTILE[name] in shown       # what the agent wrote is there to be read
    if name == "entities":
        assert "&lt;script&gt;" in shown    # an entity stays what it was written as


def test_the_whole_corpus_at_once_and_hostile_names_and_quaestio(tmp_path):
    evil = "\"><script>alert('name')</script>"
    path = debate_with(tmp_path / "d", HOSTILE, quaestio=HOSTILE["title-breakout"] + " Q?",
                       participants=(evil, "<b onmouseover=alert(2)>b</b>"))
    parsed = assert_inert(views.render(path, "html"))
    assert parsed.all("title")  # the quaestio's closing tag did not end ours
    assert evil in text_of(parsed)


def test_a_javascript_link_stays_text_and_an_https_link_is_a_link():
    out = to_html("[a](javascript:alert(1)) [b](https://example.com/x?y=1&z=2) "
                  "[c](data:text/html,x) [d](HTTPS://ok.example)")
    hrefs = [a["href"] for a in Page(out).all("a")]
    assert hrefs == ["https://example.com/x?y=1&z=2"]
    assert "[a](javascript:alert(1))" in text_of(Page(out))


def test_the_markdown_subset():
    out = to_html("# Title\n\nSome **bold**, *em*, _em_, snake_case and `a < b`.\n\n"
                  "- one\n- two\n  more\n\n1. first\n2. second\n\n> quoted\n\n"
                  "```python\nif a < b:\n    pass\n```\n\n---\n")
    parsed = Page(out)
    assert [t for t, _ in parsed.tags] == [
        "h3", "p", "strong", "em", "em", "code", "ul", "li", "li", "br", "ol", "li", "li",
        "blockquote", "p", "pre", "code", "hr"]
    assert parsed.all("code")[1] == {"class": "language-python"}
    assert "snake_case" in text_of(parsed) and "if a < b:\n    pass" in text_of(parsed)


def test_a_megabyte_line_renders_in_linear_time_and_is_cut_on_the_page():
    # quadratic patterns would not finish on these; each is one line of a megabyte
    for text in (MEGABYTE_LINE, HOSTILE["megabyte-stars"], "[" * 1_000_000,
                 "a`" * 500_000, "_a " * 333_333, "&gt; " * 200_000):
        whole = to_html(text, limit=None)
        assert len(whole) >= len(text) // 2
        assert_inert(html.page("t", whole, []))
    shown = to_html(MEGABYTE_LINE)
    assert len(shown) < 101_000 and "more in the ledger, events.jsonl]" in shown


def test_bidi_controls_and_control_characters_are_shown_not_obeyed():
    out = to_html(HOSTILE["bidi"] + HOSTILE["controls"])
    assert not re.search("[\u202a-\u202e\u2066-\u2069\u200f\x00-\x08\x0b-\x1f\x7f-\x9f]", out)
    assert "[U+202E]elbisiv[U+202C]" in out and "[U+2066]isolate[U+2069]" in out


def test_participant_colours_come_from_their_labels(tmp_path):
    path = debate_with(tmp_path / "d", {"a": "x", "b": "y"})
    page = views.render(path, "html")
    style = Page(page).style
    for label in ("advocate", "skeptic", "judge"):
        assert html.hue(label) == html.hue(label)
        assert re.search(rf"\.p-\d+ {{ --hue: {html.hue(label)}; }}", style)
    assert html.hue("advocate") != html.hue("skeptic")
    other = debate_with(tmp_path / "e", {"a": "x"}, participants=("skeptic", "advocate"))
    # the same label, the same colour, whatever its place in the lineup
    assert f"--hue: {html.hue('skeptic')}" in views.render(other, "html")


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_every_turn_of_a_recorded_debate_is_on_the_page(tmp_path, name):
    path = tmp_path / name
    shutil.copytree(FIXTURES / name, path)
    events = ledger.load(path / "events.jsonl")
    turn_ids = {e.data["turn_id"] for e in events if e.type.startswith("turn_")}
    parsed = assert_inert(views.render(path, "html"))
    articles = [a for a in parsed.all("article") if "turn" in (a.get("class") or "").split()]
    assert len(articles) == len(turn_ids) == len(summary.turns(events))
    assert {a["data-turn-id"] for a in articles} == turn_ids
