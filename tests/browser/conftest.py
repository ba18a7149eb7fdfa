"""Headless Chromium for the tests of what people look at (the HTML report, the live viewer).

Debian's ``chromium`` driven through Playwright's Python API, pointed at that executable:
Playwright's own browser builds are never downloaded. Without either, every test here skips and
says which is missing (``.ci/run`` installs both).

``page`` is a fresh page whose ``Watch`` records everything a hostile document could try: a
dialog (``alert``), a console error or uncaught exception, and every request, wherever to.
Requests to anything but the loopback host are aborted as well as recorded, so no test ever
reaches the network.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

HERE = Path(__file__).resolve().parent
# screenshots and page dumps of the last run, for people to look at (git-ignored)
ARTIFACTS = HERE.parent / "artifacts"
LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)


def chromium_path() -> str | None:
    """Debian's chromium (``$DISPUTATIO_CHROMIUM`` names another build)."""
    return os.environ.get("DISPUTATIO_CHROMIUM") or shutil.which("chromium") \
        or shutil.which("chromium-browser")


@dataclass
class Watch:
    """What a page did: dialogs it opened, errors it logged, every request it made."""

    dialogs: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)   # requests off the loopback, aborted

    def attach(self, page) -> None:
        def on_dialog(dialog) -> None:
            self.dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.on("console", lambda msg: self.console_errors.append(msg.text)
                if msg.type == "error" else None)
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        page.on("request", lambda req: self.requests.append(req.url))

        def route(r) -> None:
            url = r.request.url
            host = urlsplit(url).hostname
            if url.startswith(("file:", "data:", "about:")) or (host and (
                    host in LOOPBACK or f"[{host}]" in LOOPBACK)):
                r.continue_()
            else:
                self.blocked.append(url)
                r.abort()

        page.route("**/*", route)

    def requests_besides(self, *urls: str) -> list[str]:
        """Every request other than the ones the test itself made (the page's own URL)."""
        return [u for u in self.requests if u not in urls]

    def assert_quiet(self, *own_urls: str) -> None:
        """Nothing ran, nothing was fetched, nothing complained."""
        assert self.dialogs == []
        assert self.page_errors == []
        assert self.console_errors == []
        assert self.blocked == []
        assert self.requests_besides(*own_urls) == []


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed: pip install -e '.[test]'")
    exe = chromium_path()
    if exe is None:
        pytest.skip("chromium is not installed: apt-get install chromium (.ci/run does)")
    with sync_playwright() as pw:
        # Playwright starts chromium with --no-sandbox (its default), which root needs
        b = pw.chromium.launch(executable_path=exe, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def watched(browser):
    """``(page, watch)``: a fresh context and page, recorded from its first request."""
    context = browser.new_context(viewport={"width": 1200, "height": 900},
                                  java_script_enabled=True)
    context.set_default_timeout(10_000)
    page = context.new_page()
    watch = Watch()
    watch.attach(page)
    try:
        yield page, watch
    finally:
        context.close()


@pytest.fixture
def artifacts(request) -> Path:
    """A directory for this test's screenshots, under tests/artifacts/ (kept after the run)."""
    name = request.node.name.replace("/", "_").replace("[", "-").replace("]", "")
    path = ARTIFACTS / name
    path.mkdir(parents=True, exist_ok=True)
    return path
