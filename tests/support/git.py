"""Real git repositories built in a test's own directory, and the means to prove that one came
out of a run byte-identical."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path


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


def git(cwd: Path, *args: str, input: str | None = None, env: dict | None = None,
        strip: bool = True) -> str:
    """git's stdout (stripped, unless the bytes matter); a failing git fails the test."""
    out = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                         input=input, env=env).stdout
    return out.strip() if strip else out


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A small user repository with one commit (an identity of its own, so it needs none
    from the environment)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    write(path, files or {"README.md": "hello\n", "src/app.py": "print('hi')\n"})
    git(path, "add", "-A")
    git(path, "-c", "user.name=U", "-c", "user.email=u@example.com", "commit", "-qm", "initial")
    return path


def tree_digest(path: Path, skip: tuple[str, ...] = (), mtimes: bool = True) -> dict[str, str]:
    """Every entry under path (.git included): mode, mtime (unless ``mtimes`` is false) and
    bytes, or a link's target."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            rel = str(p.relative_to(path))
            if rel in skip:
                continue
            st = p.lstat()
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_file():
                stamp = f"{st.st_mtime_ns}:" if mtimes else ""
                out[rel] = f"{st.st_mode:o}:{stamp}" + hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[rel] = f"{st.st_mode:o}"
    return out
