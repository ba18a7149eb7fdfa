"""The user's repository with everything worth protecting (tags, a remote, a linked worktree,
hooks, a stash, staged, untracked and ignored files), the hostile agents of tests/hostile, and
the proof that a run left that repository as it was."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from support.git import git, tree_digest, write

HOSTILE = sorted(p for p in (Path(__file__).resolve().parents[1] / "hostile").iterdir()
                 if p.is_file() and os.access(p, os.X_OK))


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A user's repository with everything worth protecting, and a private temp dir."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # a hostile `git config --global` lands here
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CEILING_DIRECTORIES", raising=False)
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "User")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "user@example.com")
    hooks_ran = tmp_path / "user-hooks-ran"
    hooks_ran.mkdir()
    canary = tmp_path / "canary"
    canary.mkdir()

    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    write(repo, {"README.md": "# project\n", "src/app.py": "print('app')\n",
                 "src/util/helpers.py": "def f():\n    return 1\n", ".gitignore": "*.log\n",
                 "run.sh": "#!/bin/sh\necho run\n"})
    (repo / "run.sh").chmod(0o755)
    (repo / "docs").symlink_to("src")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    git(repo, "tag", "v1")
    git(repo, "tag", "-a", "-m", "release", "v1-annotated")
    git(repo, "branch", "feature")
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main", "feature", "--tags")
    write(repo, {"src/app.py": "print('app v2')\n"})
    git(repo, "commit", "-qam", "second")
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"), "feature")
    for hook in ("pre-commit", "post-checkout", "reference-transaction", "post-index-change",
                 "pre-push", "post-commit"):
        h = repo / ".git" / "hooks" / hook
        h.write_text(f"#!/bin/sh\ntouch {hooks_ran}/{hook}-$$\n")
        h.chmod(0o755)
    write(repo, {"stashed.txt": "to stash\n"})
    git(repo, "stash", "push", "-u", "-q", "-m", "user stash")
    write(repo, {"README.md": "# project (edited)\n", "notes/todo.txt": "untracked\n",
                 "debug.log": "ignored\n", "staged.txt": "staged\n"})
    git(repo, "add", "staged.txt")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("*.swp\n")
    for f in hooks_ran.iterdir():  # hooks ran while we built the world; start counting now
        f.unlink()
    return {"repo": repo, "remote": remote, "linked": tmp_path / "linked", "tmp": tmp,
            "home": home, "hooks_ran": hooks_ran, "canary": canary}


def user_digest(world) -> dict:
    repo = world["repo"]
    ro = ["git", "--no-optional-locks"]

    def q(*args):
        return subprocess.run([*ro, *args], cwd=repo, capture_output=True, text=True).stdout

    return {
        "repo": tree_digest(repo), "remote": tree_digest(world["remote"]),
        "linked": tree_digest(world["linked"]), "head": q("rev-parse", "HEAD"),
        "refs": q("for-each-ref"), "worktrees": q("worktree", "list", "--porcelain"),
        "stash": q("stash", "list"), "status": q("status", "--porcelain", "--ignored"),
        "home": tree_digest(world["home"]),
    }


def assert_untouched(world: dict, before) -> None:
    """The user's repository is byte-identical, fsck-clean, and no temp path survived."""
    assert user_digest(world) == before
    fsck = subprocess.run(["git", "--no-optional-locks", "fsck", "--strict", "--no-progress"],
                          cwd=world["repo"], capture_output=True, text=True)
    assert fsck.returncode == 0 and "error" not in fsck.stderr, fsck.stderr
    assert user_digest(world) == before   # fsck itself must not have changed anything
    assert list(world["tmp"].iterdir()) == []
