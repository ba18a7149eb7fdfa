"""disputatio show: one debate in four formats, chosen by folder, id or recency."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from disputatio import ledger, views
from support import invoke, run_cli
from support.ledgers import INTERRUPTED, RESOLVED, place


@pytest.fixture
def demo(home, finished) -> Path:
    """A whole debate of the simulated lineup, as a user's folder holds it."""
    path = finished("--demo", "Tabs or spaces?", "-q")
    assert list((home / ".debate").glob("debate-*")) == [path]
    return path


def test_markdown_and_json_are_the_debates_own_files(home, demo):
    md = invoke("show", "--format", "markdown", cwd=home)
    assert md.returncode == 0 and md.stdout == (demo / "debate.md").read_text()
    js = invoke("show", "--format", "json", cwd=home)
    assert js.stdout == (demo / "debate.json").read_text()


def test_a_ledger_ahead_of_its_files_is_rendered_from_the_ledger(home):
    path = place(home, RESOLVED, "20261101T100000Z")
    ledger.Ledger(path / "events.jsonl").append("resumed", {"version": "9", "retry": []})
    rendered = json.loads(invoke("show", "--format", "json", cwd=home).stdout)
    assert rendered["ledger"]["events"] == len(ledger.load(path / "events.jsonl"))
    assert rendered["status"] == "unfinished"
    md = invoke("show", "--format", "markdown", cwd=home).stdout
    assert "- **Status:** unfinished — it stopped without an ending" in md


def test_text_is_plain_off_a_terminal_and_coloured_on_one(home, demo):
    text = invoke("show", cwd=home)
    assert text.returncode == 0 and "\x1b" not in text.stdout
    assert "Tabs or spaces?" in text.stdout
    assert text.stdout.count("Proposal — ") == 3 and "final-report.md" in text.stdout
    coloured = views.render(demo, "text", color=True, width=100)
    assert "\x1b[" in coloured
    assert coloured.count("Proposal — ") == 3   # the same lines, styled


def test_by_id_by_prefix_by_folder_and_the_newest_by_default(home):
    old = place(home, RESOLVED, "20261101T100000Z")
    new = place(home, INTERRUPTED, "20261102T100000Z")
    newest = invoke("show", "--format", "json", cwd=home)
    assert json.loads(newest.stdout)["status"] == "interrupted"
    for given in (old.name, "20261101", str(old)):
        ran = invoke("show", given, "--format", "json", cwd=home)
        assert ran.returncode == 0, ran.stderr
        assert json.loads(ran.stdout)["status"] == "resolved"
    assert new.is_dir()


@pytest.mark.parametrize("args, message", [
    (["2026"], "error: '2026' names 2 debates under {root} (debate-20261102T100000Z, "
               "debate-20261101T100000Z, ...); give more of it"),
    (["20250101"], "error: no debate '20250101' under {root} (see disputatio list)"),
    (["--format", "pdf"], "error: --format must be text, markdown, json or html, not 'pdf'"),
    (["--open"], "error: --open needs --out FILE, or --format html"),
])
def test_what_cannot_be_shown_is_one_line_and_exit_2(home, args, message):
    place(home, RESOLVED, "20261101T100000Z")
    place(home, INTERRUPTED, "20261102T100000Z")
    ran = invoke("show", *args, cwd=home)
    assert ran.returncode == 2 and ran.stdout == ""
    assert ran.stderr.strip() == message.format(root=home / ".debate")


def test_no_debate_at_all(home):
    ran = invoke("show", cwd=home)
    assert ran.returncode == 2
    assert ran.stderr.strip() == f"error: no debate found under {home / '.debate'}; see " \
                                 "disputatio list"


def test_a_broken_ledger_is_one_line(home):
    path = place(home, RESOLVED, "20261101T100000Z")
    (path / "events.jsonl").write_text("garbage\n{}\n")
    ran = invoke("show", "--format", "html", cwd=home)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert ran.stderr.startswith("error: ") and len(ran.stderr.strip().splitlines()) == 1


def test_open_writes_the_page_into_the_debate_and_hands_it_to_the_browser(home, tmp_path):
    path = place(home, RESOLVED, "20261101T100000Z")
    seen = tmp_path / "opened"
    browser = tmp_path / "browser"
    browser.write_text(f"#!/bin/sh\necho \"$1\" > {seen}\n")
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
    ran = invoke("show", "--format", "html", "--open", cwd=home, env={"BROWSER": str(browser)})
    assert ran.returncode == 0, ran.stderr
    page = path / "debate.html"
    assert ran.stdout.strip() == str(page)
    assert seen.read_text().strip() == page.resolve().as_uri()
    assert page.read_text().startswith("<!doctype html>")


@pytest.mark.process
def test_show_html_out_as_its_own_process(home):
    place(home, RESOLVED, "20261101T100000Z")
    out = home / "report.html"
    ran = run_cli("show", "--format", "html", "--out", str(out), cwd=home)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == f"{out}\n" and ran.stderr == ""
    page = out.read_text(encoding="utf-8")
    assert page.count("<article class=\"turn ") == 10
    assert "<script" not in page and "http-equiv=\"Content-Security-Policy\"" in page
    assert not list(home.glob(".*.tmp"))


def test_a_megabyte_answer_is_shown_cut_as_the_page_shows_it(home):
    from support.hostile_answers import MEGABYTE_LINE, debate_with

    path = debate_with(home / ".debate" / "debate-20261101T000000Z",
                       {"a": MEGABYTE_LINE, "b": "short"})
    for shown in (invoke("show", cwd=home).stdout, views.render(path, "text", color=True)):
        assert "more in the ledger, events.jsonl]" in shown
        unwrapped = re.sub(r"\x1b\[[0-9;]*m|\n", "", shown)   # colour wraps at the width
        runs = [len(run) for run in re.findall("A{1000,}", unwrapped)]
        assert runs and all(90_000 < n <= 100_000 for n in runs) and "short" in shown


def test_no_control_sequence_of_a_debate_reaches_the_terminal(home):
    from support.hostile_answers import HOSTILE, debate_with

    path = debate_with(home / ".debate" / "debate-20261101T000000Z", HOSTILE,
                       quaestio="\x1b]0;pwned\x07Q?", participants=("\x1b[31mred", "b"))
    plain = invoke("show", cwd=home)
    assert plain.returncode == 0
    assert not any(c in plain.stdout for c in "\x1b\x9b\x07\x00\u202e")
    coloured = views.render(path, "text", color=True)
    # rich's own colours only: select graphic rendition, never a title, a clear or a mode
    assert set(__import__("re").findall(r"\x1b(.)", coloured)) == {"["}
    assert "Q?" in coloured and "pwned" not in coloured and "\x1b[2J" not in coloured
