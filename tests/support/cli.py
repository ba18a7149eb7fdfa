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
import tempfile
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

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
    directory, environment (``env`` adds to it; a value of None unsets; a TMPDIR is where
    temp files go, as it is for a new process), argv and stdin are this call's and put back
    afterwards."""
    from disputatio import cli

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_argv, saved_stdin, saved_tmp = sys.argv, sys.stdin, tempfile.tempdir
    try:
        if (env or {}).get("TMPDIR"):
            tempfile.tempdir = str(env["TMPDIR"])
        for k, v in (env or {}).items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
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
        sys.argv, sys.stdin, tempfile.tempdir = saved_argv, saved_stdin, saved_tmp
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return Ran(code, out.getvalue(), err.getvalue())


def write_config(path: Path, participants: list[dict], judge: dict | bool | None = None,
                 **top) -> Path:
    """A lineup YAML file (dumped with pyyaml, so tests state data, not syntax). ``judge``:
    None a simulated one, False none at all (the lineup debates, or meets, alone)."""
    import yaml

    data = {**top, "participants": participants}
    if judge is not False:
        data["judge"] = judge or {"adapter": "simulated", "name": "judge", "model": "judge"}
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


def run_init(tmp_path: Path, bindir: Path, *args: str,
             env: dict[str, str] | None = None) -> Ran:
    """``disputatio --init`` with PATH = ``bindir`` only, HOME and XDG_CONFIG_HOME in tmp, and
    only $HOME-relative install dirs searched, so a real CLI in /usr/local/bin (or
    /opt/homebrew/bin) cannot leak into the test."""
    from disputatio import doctor

    unset = {k: None for k in os.environ if k.startswith(("XDG_", "DISPUTATIO_"))}
    bindir.mkdir(parents=True, exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    own = tuple(d for d in doctor.USUAL_DIRS if d.startswith("~"))
    with mock.patch.object(doctor, "USUAL_DIRS", own):
        return invoke("--init", *args, cwd=tmp_path, env={
            **unset, "PATH": str(bindir), "HOME": str(tmp_path / "home"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"), **(env or {})})


def config_file(tmp_path: Path) -> Path:
    """The user config ``run_init`` writes."""
    return tmp_path / "xdg" / "disputatio" / "config.yaml"
