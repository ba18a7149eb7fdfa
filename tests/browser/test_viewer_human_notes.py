"""``watch --human`` in headless Chromium: a committee's question tells the page, above its
choices, who was dropped in the round and who is still in the meeting, as the terminal does."""

from __future__ import annotations

from support import sim, write_config
from support.terminal import PROMPT, Terminal
from support.watching import viewer


def test_the_page_shows_a_drop_above_the_choices(watched, home):
    page, watch = watched
    members = [sim("ada"), sim("bob"), sim("cyd", DISPUTATIO_SIM_FAIL=1)]
    cfg = write_config(home / "d.yaml", members, protocol={"attempts": 1})
    t = Terminal(["run", "Ship it?", "--protocol", "committee", "--config", str(cfg), "--human",
                  "-q"], home)
    try:
        with viewer(home, own_threads=False, human=True) as (url, _):
            shown = t.expect(PROMPT)
            assert "! cyd is dropped from the meeting" in shown
            (debate,) = (home / ".debate").glob("debate-*")
            page.goto(f"{url}debates/{debate.name}")
            ask = page.locator("#ask[data-key='round-1']")
            ask.locator("h2", has_text="Round 1 of at most 8 is over").wait_for()
            notes = ask.locator("p.note").all_inner_texts()
            assert notes[0].startswith("cyd is dropped from the meeting after a failed "
                                       "attempt in round 1 (api_error")
            assert notes[1:] == ["Still in the meeting: ada and bob."]
            # the notes come before the choices
            assert ask.locator("p.note + div.row, p.note ~ div.row").count() >= 1
            ask.locator("button[data-action=pick]").click()
            t.expect("answered in the browser, recorded: pick close the meeting", timeout=10)
            code, _ = t.finish()
    finally:
        t.close()
    assert code == 0, t.screen
    assert watch.dialogs == [] and watch.page_errors == [] and watch.console_errors == []
