"""The live viewer in a real browser: a turn another process appends shows within 2 s, a
redaction replaces the text on the open page, hostile answers stay text, and the page fetches
nothing but its own stream and API. Screenshots land in tests/artifacts/ (docs/viewing.md)."""

from __future__ import annotations

import shutil
import time
from datetime import datetime
from pathlib import Path

from disputatio import ledger
from disputatio.render import summary
from support.hostile_answers import HOSTILE, debate_with
from support.watching import add_turn, append_elsewhere, make_debate, viewer

FOREIGN = "script, iframe, img, svg, object, embed, link, base, form, textarea, input, button"


def _at(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def test_a_turn_appended_by_another_process_shows_within_2s(watched, artifacts, home):
    page, watch = watched
    debate = make_debate(home, participants=("advocate", "skeptic", "late0"))
    events = debate / "events.jsonl"
    add_turn(events, "advocate", "Measure first, then decide.")
    with viewer(home, own_threads=False) as (url, _):
        own = f"{url}debates/{debate.name}"
        page.goto(own)
        page.locator('[data-turn="proposal/advocate"] .text').wait_for()
        assert page.inner_text('[data-turn="proposal/advocate"] .text') == \
            "Measure first, then decide."
        writer = append_elsewhere(events, 1)
        assert writer.wait(30) == 0
        late = page.locator('[data-turn="proposal/late0"] .text',
                            has_text="answer 0 from another process")
        deadline = time.monotonic() + 10
        while late.count() == 0 and time.monotonic() < deadline:
            page.wait_for_timeout(20)
        shown = time.time()
        assert late.count() == 1, "the appended turn never showed"
        answered = [e for e in ledger.load(events) if e.type == "turn_completed"][-1]
        delay = shown - _at(answered.ts)
        print(f"\nshown {delay:.2f} s after it was appended")
        assert delay < 2.0, f"shown {delay:.2f} s after it was appended"
        assert page.locator("#status").inner_text().startswith("running")
        page.screenshot(path=artifacts / "viewer.png", full_page=True)
        watch.assert_quiet(own, f"{url}v1/debates/{debate.name}/stream")


def test_a_redaction_replaces_the_text_on_the_open_page(watched, home):
    from disputatio.redaction import redact

    page, watch = watched
    debate = make_debate(home)
    add_turn(debate / "events.jsonl", "skeptic", "The customer is ACME Corp.")
    with viewer(home, own_threads=False) as (url, _):
        page.goto(f"{url}debates/{debate.name}")
        text = page.locator('[data-turn="proposal/skeptic"] .text')
        text.wait_for()
        assert text.inner_text() == "The customer is ACME Corp."
        redact(debate, "proposal/skeptic", "a customer's name", who="tester")
        page.locator('[data-turn="proposal/skeptic"].redacted').wait_for(timeout=5000)
        assert text.inner_text() == "[REDACTED: a customer's name]"
        assert "ACME" not in page.inner_text("body")


def test_the_list_links_every_debate(watched, artifacts, home):
    page, watch = watched
    first = make_debate(home, "20261201T100000Z", quaestio="Rewrite the backend in Rust?")
    second = make_debate(home, "20261201T110000Z", quaestio="Adopt feature flags?")
    add_turn(second / "events.jsonl", "advocate", "Yes.")
    with viewer(home, own_threads=False) as (url, _):
        page.goto(url)
        rows = page.locator("tr[data-debate]")
        rows.nth(1).wait_for()
        assert [rows.nth(i).get_attribute("data-debate") for i in range(rows.count())] == \
            [second.name, first.name]
        page.screenshot(path=artifacts / "viewer-list.png", full_page=True)
        page.click("text=Rewrite the backend in Rust?")
        page.wait_for_url(f"{url}debates/{first.name}")
        page.locator("#title", has_text="Rewrite the backend in Rust?").wait_for()
        watch.assert_quiet(url, f"{url}v1/debates", f"{url}debates/{first.name}",
                           f"{url}v1/debates/{first.name}/stream")


def test_hostile_answers_stay_text(watched, home):
    page, watch = watched
    debate = debate_with(home / ".debate" / "debate-20261201T100000Z", HOSTILE,
                         participants=("\"><img src=x onerror=alert('name')>", "skeptic"))
    with viewer(home, own_threads=False) as (url, _):
        own = f"{url}debates/{debate.name}"
        # megabyte answers, each cut to 100,000 characters on the page, take seconds to lay out
        page.set_default_timeout(90_000)
        page.goto(own)
        cards = page.locator("section.turn")
        page.locator('[data-turn="respondeo-1"] .text').wait_for()
        assert cards.count() == len(HOSTILE) + 1
        page.mouse.move(300, 300)
        page.keyboard.press("Tab")
        assert page.url == own
        assert page.locator(f"main :is({FOREIGN})").count() == 0
        body = page.inner_text("main")
        assert "<script>alert('script')</script>" in body
        assert "<img src=x onerror=alert('img')>" in body
        watch.assert_quiet(own, f"{url}v1/debates/{debate.name}/stream")


def test_older_ledgers_show_every_turn_and_how_they_ended(watched, home):
    page, watch = watched
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "ledgers"
    ends = {"v0.1.0-41135e7": "resolved", "v0.1.0-41135e7-interrupted": "interrupted",
            "v0.1.0-e26cab3": "resolved"}
    for n, name in enumerate(sorted(ends)):
        shutil.copytree(fixtures / name, home / ".debate" / f"debate-2026110{n + 1}T100000Z")
    with viewer(home, own_threads=False) as (url, _):
        for n, name in enumerate(sorted(ends)):
            debate = home / ".debate" / f"debate-2026110{n + 1}T100000Z"
            events = ledger.load(debate / "events.jsonl")
            page.goto(f"{url}debates/{debate.name}")
            page.locator("#status", has_text=f"{len(events)} events").wait_for()
            assert page.locator("#status").inner_text().startswith(ends[name])
            shown = page.locator("section.turn")
            assert sorted(shown.nth(i).get_attribute("data-turn") for i in
                          range(shown.count())) == \
                sorted(v.turn.turn_id for v in summary.turns(events))
        assert watch.dialogs == [] and watch.page_errors == [] and watch.console_errors == []
