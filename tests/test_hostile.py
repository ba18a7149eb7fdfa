"""Hostile agents in every checkout, two turns each: the user's repository must come out
byte-identical (files, .git, mtimes, remote, linked worktree), fsck-clean, with no temp path left,
and every checkout must be pristine again before each turn."""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from disputatio.workspace import Workspaces, open_snapshot

HOSTILE = sorted(p for p in (Path(__file__).parent / "hostile").iterdir()
                 if p.is_file() and os.access(p, os.X_OK))
NAMES = ["alpha", "beta"]


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


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def tree_digest(path: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Every entry under path: mode, mtime and bytes (or link target)."""
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
                out[rel] = f"{st.st_mode:o}:{st.st_mtime_ns}:" + hashlib.sha256(
                    p.read_bytes()).hexdigest()
            else:
                out[rel] = f"{st.st_mode:o}"
    return out


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


def checkout_digest(p: Path) -> dict:
    """A checkout as git sees it: content, links, exec bits (git tracks no other permission
    bits, so a chmod that leaves files readable is not reset) and git's own metadata."""
    tree = {}
    for rel, v in tree_digest(p, skip=(".git/index",)).items():
        mode, _, rest = v.partition(":")
        if v.startswith("link:") or not rest:
            tree[rel] = v if v.startswith("link:") else "dir"
        else:
            tree[rel] = ("x" if int(mode, 8) & 0o100 else "-") + rest.split(":", 1)[1]
    return {"tree": tree, "status": git(p, "status", "--porcelain", "--ignored"),
            "index": git(p, "ls-files", "-s", "-v"), "refs": git(p, "for-each-ref"),
            "head": (p / ".git" / "HEAD").read_text()}


def run_agent(script: Path, cwd: Path, canary: Path) -> str:
    """As the engine runs an agent: cwd and PWD/OLDPWD at the workspace, the rest inherited."""
    env = {**os.environ, "PWD": str(cwd), "OLDPWD": str(cwd), "HOSTILE_CANARY": str(canary)}
    res = subprocess.run([str(script)], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, (script.name, res.stderr)
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0], (script.name, res.stdout)
    return lines[0]


def test_hostile_scripts_exist():
    names = {p.name for p in HOSTILE}
    assert len(names) >= 7, names


@pytest.mark.parametrize("include_uncommitted", [False, True], ids=["head", "uncommitted"])
def test_hostile_agents_cannot_touch_the_user_repo(world, include_uncommitted):
    before = user_digest(world)
    snap = open_snapshot(world["repo"], include_uncommitted=include_uncommitted)
    ws = Workspaces(snap, [*NAMES, "judge"], no_repo={"judge"})
    pristine = {name: checkout_digest(ws.path_for(name)) for name in NAMES}
    for turn in (1, 2):
        for name in [*NAMES, "judge"]:
            for script in HOSTILE:
                p = ws.path_for(name)
                if name == "judge":
                    assert list(p.iterdir()) == []
                else:
                    assert checkout_digest(p) == pristine[name], (turn, name, script.name)
                    assert not any(str(world["repo"]) in v for v in
                                   [str(p), (p / ".git" / "config").read_text()])
                run_agent(script, p, world["canary"])
    for name in NAMES:  # the last turn's damage is repaired too
        assert checkout_digest(ws.path_for(name)) == pristine[name]
    assert ws.stats["resets"] + ws.stats["rebuilds"] > 0
    ws.close()

    assert_untouched(world, before)
    assert list(world["hooks_ran"].iterdir()) == []
    assert list(world["canary"].iterdir()) == []


# Control: the checkouts we rejected. Against them these scripts do reach the user's repository
# (a worktree shares refs, config and hooks; a --shared clone has the user's repo as origin and
# its object store as an alternate), so the test above is not passing vacuously.
TEETH = {
    "worktree": ["commit_everything.sh", "escape.py", "gc_and_prune.sh", "push_everywhere.sh",
                 "rewrite_config_and_hooks.sh"],
    "clone-shared": ["escape.py", "push_everywhere.sh"],
}


@pytest.mark.parametrize(("how", "script"), [(h, s) for h, ss in TEETH.items() for s in ss])
def test_the_scripts_have_teeth(world, how, script):
    target = world["tmp"] / "naive"
    if how == "worktree":
        git(world["repo"], "worktree", "add", "-q", "--detach", str(target))
    else:
        git(world["tmp"], "clone", "-q", "--shared", str(world["repo"]), str(target))
    before = user_digest(world)
    run_agent(Path(__file__).parent / "hostile" / script, target, world["canary"])
    assert user_digest(world) != before


def assert_untouched(world: dict, before) -> None:
    """The user's repository is byte-identical, fsck-clean, and no temp path survived."""
    assert user_digest(world) == before
    fsck = subprocess.run(["git", "--no-optional-locks", "fsck", "--strict", "--no-progress"],
                          cwd=world["repo"], capture_output=True, text=True)
    assert fsck.returncode == 0 and "error" not in fsck.stderr, fsck.stderr
    assert user_digest(world) == before   # fsck itself must not have changed anything
    assert list(world["tmp"].iterdir()) == []
