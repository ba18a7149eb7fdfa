"""disputatio as a user types it, two ways: ``run_cli`` starts the real program in its own
process (the entry point, signals, an interpreter that exits), ``invoke`` runs the same
``cli.main`` in this process, for what only needs the command line's answer (usage errors,
messages, exit codes, the artifacts of a whole debate) without paying for an interpreter."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, cwd: Path, env: dict | None = None, timeout: float = 120,
            input: str | None = None) -> subprocess.CompletedProcess:
    """Run disputatio as a user would: a separate process, stdout and stderr captured."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "disputatio", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL)


@dataclass
class Ran:
    """What ``invoke`` saw: the fields of a ``CompletedProcess`` that tests read."""

    returncode: int
    stdout: str
    stderr: str


def invoke(*args: str, cwd: Path | None = None, env: dict | None = None,
           input: str | None = None) -> Ran:
    """``disputatio ARGS`` through the console entry's own ``cli.main`` in this process: the
    same parsing, error lines and exit codes, stdout and stderr captured. The working
    directory, environment, argv and stdin are this call's and put back afterwards."""
    from disputatio import cli

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_argv, saved_stdin = sys.argv, sys.stdin
    try:
        os.environ.update({k: str(v) for k, v in (env or {}).items()})
        if cwd is not None:
            os.chdir(cwd)
        sys.argv, sys.stdin = ["disputatio", *args], io.StringIO(input or "")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        sys.argv, sys.stdin = saved_argv, saved_stdin
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return Ran(code, out.getvalue(), err.getvalue())


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


def one_path(out: str) -> Path:
    """The one line a command prints on stdout, as a path."""
    lines = out.splitlines()
    assert len(lines) == 1, f"stdout must be exactly one line, got {lines!r}"
    return Path(lines[0])
