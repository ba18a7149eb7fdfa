"""The recorder the browser tests rely on sees what it must: a test asserting "no dialog, no
request" is only worth something if a dialog and a request would have been caught."""

from __future__ import annotations


def test_watch_records_dialogs_errors_and_requests(watched, tmp_path):
    page, watch = watched
    doc = tmp_path / "noisy.html"
    doc.write_text("<p>hi</p><script>alert(1); console.error('boom');</script>"
                   "<img src='http://example.com/x.png'><script>throw new Error('thrown')"
                   "</script>")
    page.goto(doc.as_uri())
    page.wait_for_load_state("load")
    assert watch.dialogs == ["alert: 1"]
    assert "boom" in watch.console_errors
    assert any("thrown" in e for e in watch.page_errors)
    assert watch.blocked == ["http://example.com/x.png"]    # recorded and never fetched
    assert watch.requests_besides(doc.as_uri()) == ["http://example.com/x.png"]


def test_a_quiet_page_is_quiet(watched, tmp_path):
    page, watch = watched
    doc = tmp_path / "quiet.html"
    doc.write_text("<!doctype html><title>q</title><p>nothing happens here</p>")
    page.goto(doc.as_uri())
    watch.assert_quiet(doc.as_uri())
