"""Shared fixtures: every test runs in its own directory with no user config in reach."""

from __future__ import annotations

import os

import pytest

from disputatio.adapters import transport

# the helpers live in tests/support; these names stay importable from conftest for modules
# that still import them from here
from support import ROOT, isolate_git, run_cli, sim, write_config  # noqa: F401
from support.box import box  # noqa: F401  (a fixture: disputatio's own TMPDIR and marker)
from support.finished import finished, made_debates  # noqa: F401  (a copy of a debate made once)
from support.procs import env  # noqa: F401  (a fixture: our environment plus a marker)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (pytest-xdist): one worker more than the cores. The fast tier's tests wait
    much of their time on agent processes and servers, and the extra worker fills those waits
    (two cores: 27 s with three workers, 30 s with two)."""
    return (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(items):
    """Chromium is a process of its own: the browser tests are part of the process tier, so the
    fast tier (``-m "not real and not process"``) leaves them out."""
    for item in items:
        if item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.process)


@pytest.fixture(autouse=True)
def _fence_off_unless_asked(request, monkeypatch):
    """Process tests watch their fakes through files outside the checkout (pid files, call
    logs), which the write fence rightly forbids; so the fence is off by default here and on
    in tests/test_fence.py (``FENCED = True``) and the real tier."""
    if not (getattr(request.module, "FENCED", False) or request.node.get_closest_marker("real")):
        monkeypatch.setenv("DISPUTATIO_FENCE", "off")
    transport.use_fence(None)
    yield
    transport.use_fence(None)


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A working directory and an empty XDG config home, so the built-in lineup applies."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("NO_COLOR", raising=False)
    return work
