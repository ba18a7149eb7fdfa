"""Finished debates made once per test process. A test whose subject is what is done to a
finished debate (verify, redact, show, a signature check, a refused continue) needs one to
exist, not to watch it run: it gets a copy of its own of a debate run once for the same
command line, instead of paying again for the participants' processes. The made-once folder
is never handed out; every test writes only to its copy."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from support.cli import invoke


class MadeDebates:
    """Debates run once each, keyed by their command line, lineup and environment."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: dict[tuple, Path] = {}

    def copy(self, home: Path, *args: str, lineup: dict | None = None,
             env: dict | None = None, codes: tuple[int, ...] = (0,)) -> Path:
        """The debate ``disputatio ARGS`` makes (with ``--config`` a file of ``lineup`` when
        given; the run's exit code one of ``codes``), copied into ``home/.debate``: the copy's
        folder."""
        key = (args, repr(lineup), tuple(sorted((env or {}).items())))
        if key not in self.made:
            self.made[key] = self._run(len(self.made), args, lineup, env or {}, codes)
        made = self.made[key]
        target = home / ".debate" / made.name
        assert not target.exists(), f"{home} holds a copy of {made.name} already"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(made.parent / ".gitignore", target.parent / ".gitignore")
        shutil.copytree(made, target, symlinks=True)
        return target

    def _run(self, n: int, args: tuple[str, ...], lineup: dict | None, env: dict,
             codes: tuple[int, ...]) -> Path:
        """Run the debate in a directory of its own, in the environment the ``home`` fixture
        gives a test (the built-in lineup, no fence, colour allowed) whatever the first test
        that asks for it has set: no DISPUTATIO_ variable of the test reaches it."""
        where = self.root / str(n)
        work = where / "work"
        work.mkdir(parents=True)
        if lineup is not None:
            cfg = where / "lineup.yaml"
            cfg.write_text(yaml.safe_dump(lineup, sort_keys=False))
            args = (*args, "--config", str(cfg))
        clean: dict = {k: None for k in os.environ if k.startswith("DISPUTATIO_")}
        ran = invoke(*args, cwd=work, env={
            **clean, "DISPUTATIO_FENCE": "off", "XDG_CONFIG_HOME": str(where / "xdg"),
            "NO_COLOR": None, **env})
        assert ran.returncode in codes, ran.stderr
        [folder] = (work / ".debate").glob("debate-*")
        return folder


@pytest.fixture(scope="session")
def made_debates(tmp_path_factory) -> MadeDebates:
    """The debates made so far in this test process."""
    return MadeDebates(tmp_path_factory.mktemp("made-debates"))


@pytest.fixture
def finished(made_debates, home):
    """``finished(*args, lineup=None, env=None, codes=(0,))``: a copy, in this test's
    ``home/.debate``, of the finished debate those arguments make; its folder."""
    def copy(*args: str, lineup: dict | None = None, env: dict | None = None,
             codes: tuple[int, ...] = (0,)) -> Path:
        return made_debates.copy(home, *args, lineup=lineup, env=env, codes=codes)
    return copy
