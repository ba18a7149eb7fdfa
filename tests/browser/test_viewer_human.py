"""``watch --human`` in headless Chromium: a real ``run --human`` on a pseudo-terminal, its
questions answered by clicking the page's controls; each question goes from the page once the
ledger records the answer, and the page fetches nothing but its own origin."""

from __future__ import annotations

from pathlib import Path

from disputatio import ledger
from support import sim, write_config
from support.terminal import PROMPT, Terminal
from support.watching import viewer


def test_a_running_debate_answered_from_the_page(watched, artifacts, home):
    page, watch = watched
    cfg = write_config(home / "d.yaml", [sim("ada"), sim("bob")], rounds=1)
    t = Terminal(["run", "Ship it?", "--config", str(cfg), "--human", "-q"], home)
    try:
        with viewer(home, own_threads=False, human=True) as (url, _):
            t.expect(PROMPT)
            (debate,) = (home / ".debate").glob("debate-*")
            page.goto(f"{url}debates/{debate.name}")
            ask = page.locator("#ask[data-key='round-0']")
            ask.locator("h2", has_text="Your turn: The proposals are in").wait_for()
            assert ask.locator("select[name=participant] option").all_inner_texts() == \
                ["1 ada", "2 bob"]
            page.screenshot(path=artifacts / "viewer-human.png", full_page=True)
            ask.locator("select[name=participant]").select_option("bob")
            ask.locator("select[name=strength]").select_option("3")
            ask.locator("button[data-action=agree]").click()
            t.expect("answered in the browser, recorded: agree with bob (strength 3 of 3)",
                     timeout=10)
            page.locator("p.meta", has_text="the human in the loop: agree bob").wait_for()

            steer = page.locator("#ask[data-key='round-1']")
            steer.locator("textarea[name=steer]").fill("Mind the <b>rollback</b>")
            steer.locator("button[data-action=steer]").click()
            t.expect("answered in the browser, recorded: steer: Mind the <b>rollback</b>",
                     timeout=10)
            page.locator("#status", has_text="resolved").wait_for(timeout=30_000)
            assert page.locator("#ask").is_hidden()
            code, out = t.finish()
            own = url.rstrip("/")
            assert [u for u in watch.requests if not u.startswith(own + "/")] == []
    finally:
        t.close()
    assert code == 0, t.screen
    assert Path(out.strip()) == debate / "final-report.md"
    assert [(e.data["key"], e.data["action"]) for e in ledger.load(debate / "events.jsonl")
            if e.type == "human_acted"] == [("round-0", "agree"), ("round-1", "steer")]
    assert not (debate / "human").exists()
    assert watch.dialogs == [] and watch.page_errors == [] and watch.console_errors == []
