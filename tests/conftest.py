"""Shared fixtures: every test runs in its own directory with no user config in reach."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from disputatio.adapters import transport

ROOT = Path(__file__).resolve().parents[1]


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


def run_cli(*args: str, cwd: Path, env: dict | None = None, timeout: float = 120,
            input: str | None = None) -> subprocess.CompletedProcess:
    """Run disputatio as a user would: a separate process, stdout and stderr captured."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "disputatio", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL)


def write_config(path: Path, participants: list[dict], judge: dict | None = None,
                 **top) -> Path:
    """A lineup YAML file (dumped with pyyaml, so tests state data, not syntax)."""
    import yaml

    data = {**top, "participants": participants,
            "judge": judge or {"adapter": "simulated", "name": "judge", "model": "judge"}}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def sim(name: str, **env) -> dict:
    """A simulated participant; ``env`` scripts it (see disputatio.simulated)."""
    p = {"adapter": "simulated", "name": name, "model": name}
    if env:
        p["env"] = {k: str(v) for k, v in env.items()}
    return p


def isolate_git(tmp_path: Path, monkeypatch, name: str = "Tester",
                email: str = "t@example.com") -> Path:
    """Temp roots land in this test's own dir (never another run's), git's config is this
    test's (no system or user config, no repository above ``tmp_path``); returns the temp dir."""
    import tempfile

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", name)
        monkeypatch.setenv(f"GIT_{role}_EMAIL", email)
    return tmp
