"""Fixtures for driving the real agent CLIs against the scripted model server.

Why a session-scoped install: the five pinned CLIs are ~1.4 GB and take about a minute to
install cold; one cached install serves every test (and later sessions). When npm cannot reach
its registry the whole directory skips with the reason instead of failing.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .clis import RealCliUnavailable, dirs_root, ensure_installed
from .model_server import ScriptedModelServer

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under tests/real as ``real`` (this hook sees all items, so filter)."""
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.real)


@pytest.fixture(scope="session")
def real_clis() -> dict[str, Path]:
    """``{name: bin path}`` for claude, codex, gemini, copilot and pi (installed once)."""
    try:
        return ensure_installed()
    except RealCliUnavailable as exc:
        pytest.skip(f"real agent CLIs unavailable: {exc}")


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest) -> Iterator[Path]:
    """pytest's ``tmp_path``, moved out of the system temp dir (see ``clis.dirs_root``)
    and removed after the test."""
    root = dirs_root()
    root.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^\w.-]", "_", request.node.name)[:40]
    path = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def model_server() -> Iterator[ScriptedModelServer]:
    """A fresh scripted model server per test; script it with ``.add``/``.script``."""
    with ScriptedModelServer() as server:
        yield server
