"""The HTML report in a real browser: every turn is there, and a hostile answer neither runs
nor fetches anything. Screenshots land in tests/artifacts/ (docs/viewing.md links one)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from disputatio import ledger, views
from disputatio.render import summary
from support import run_cli
from support.hostile_answers import HOSTILE, debate_with

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ledgers"
# elements none of our pages has: any of them would be an answer turned into markup
FOREIGN = "script, iframe, img, svg, object, embed, link, base, form, textarea, input, button"


def _open(page, path: Path):
    out = path.parent / f"{path.name}.html"
    out.write_text(views.render(path, "html"), encoding="utf-8")
    page.goto(out.as_uri(), wait_until="domcontentloaded")
    return out.as_uri()


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_the_report_shows_every_turn_of_the_ledger(watched, artifacts, tmp_path, name):
    page, watch = watched
    path = tmp_path / name
    shutil.copytree(FIXTURES / name, path)
    url = _open(page, path)
    events = ledger.load(path / "events.jsonl")
    turn_ids = {e.data["turn_id"] for e in events if e.type.startswith("turn_")}
    turns = page.locator("article.turn")
    assert turns.count() == len(turn_ids) == len(summary.turns(events))
    shown = {turns.nth(i).get_attribute("data-turn-id") for i in range(turns.count())}
    assert shown == turn_ids
    for i in range(turns.count()):
        assert turns.nth(i).is_visible()
    page.screenshot(path=artifacts / "report.png", full_page=True)
    watch.assert_quiet(url)


def test_a_hostile_answer_does_not_run_or_fetch(watched, artifacts, tmp_path):
    page, watch = watched
    path = debate_with(tmp_path / "hostile", HOSTILE,
                       quaestio=HOSTILE["title-breakout"] + " which is safer?",
                       participants=("\"><img src=x onerror=alert('name')>", "skeptic"))
    url = _open(page, path)
    page.mouse.move(200, 400)           # a hover handler would fire now
    page.keyboard.press("Tab")          # and a focus one
    assert page.url == url              # no refresh, no base, no form took it elsewhere
    assert page.locator("article.turn").count() == len(HOSTILE) + 1
    assert page.locator(FOREIGN).count() == 0
    assert page.locator("meta[http-equiv=refresh]").count() == 0
    body = page.inner_text("body")
    assert "<script>alert('script')</script>" in body    # shown, as text
    assert "<img src=x onerror=alert('img')>" in body
    assert page.evaluate("document.querySelectorAll('a[href]').length") == \
        page.evaluate("[...document.querySelectorAll('a[href]')]"
                      ".filter(a => /^https?:$/.test(a.protocol)).length")
    page.screenshot(path=artifacts / "hostile.png")
    watch.assert_quiet(url)


def test_show_writes_a_page_a_browser_shows_with_its_report_first(watched, artifacts, home):
    page, watch = watched
    run = run_cli("--demo", "Should we rewrite the backend in Rust?", "-q", cwd=home)
    assert run.returncode == 0, run.stderr
    out = home / "report.html"
    shown = run_cli("show", "--format", "html", "--out", str(out), cwd=home)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == str(out)
    page.goto(out.as_uri())
    primary = page.locator("section.documents article.document.primary")
    assert primary.get_attribute("data-document") == "final-report.md"
    assert primary.is_visible()
    box = primary.bounding_box()
    first_turn = page.locator("article.turn").first.bounding_box()
    assert box is not None and first_turn is not None and box["y"] < first_turn["y"]
    assert "Final report" in primary.inner_text()
    page.screenshot(path=artifacts / "demo.png")
    watch.assert_quiet(out.as_uri())
