"""The isolation layer against real git repositories built in tmp_path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from disputatio.gitenv import WorkspaceError, agent_env
from disputatio.procs import process_start
from disputatio.snapshot import open_snapshot
from disputatio.temproots import boot_id, sweep_leftovers
from disputatio.workspace import Workspaces
from support import git, isolate_git, make_repo, tree_digest


@pytest.fixture(autouse=True)
def private_tmp(tmp_path, monkeypatch):
    """Temp roots land in this test's own dir (never another run's), git config is isolated."""
    return isolate_git(tmp_path, monkeypatch)


def status(p: Path) -> str:
    return git(p, "status", "--porcelain", "--ignored")


# ---------------------------------------------------------------- snapshot errors


def test_missing_path(tmp_path):
    with pytest.raises(WorkspaceError, match="does not exist") as exc:
        open_snapshot(tmp_path / "nope")
    assert "\n" not in str(exc.value)


def test_not_a_repository(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(WorkspaceError, match="not a git repository") as exc:
        open_snapshot(tmp_path / "plain")
    assert "\n" not in str(exc.value)


def test_no_commits(tmp_path):
    (tmp_path / "empty").mkdir()
    git(tmp_path / "empty", "init", "-q")
    with pytest.raises(WorkspaceError, match="no commits") as exc:
        open_snapshot(tmp_path / "empty")
    assert "\n" not in str(exc.value)


def test_errors_leave_no_temp_root(tmp_path, private_tmp):
    for bad in (tmp_path / "nope", tmp_path):
        with pytest.raises(WorkspaceError):
            open_snapshot(bad)
    assert list(private_tmp.iterdir()) == []


# ---------------------------------------------------------------- snapshot contents


def test_clean_repo_has_no_warnings(tmp_path):
    repo = make_repo(tmp_path / "repo")
    snap = open_snapshot(repo)
    assert snap.commit == git(repo, "rev-parse", "HEAD")
    assert snap.branch == "refs/heads/main"
    assert snap.warnings == []
    snap.close()


def test_dirty_tree_warns_and_agents_see_head(tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / "README.md").write_text("changed\n")
    snap = open_snapshot(repo)
    assert any("uncommitted changes" in w and "--include-uncommitted" in w for w in snap.warnings)
    ws = Workspaces(snap, ["a"])
    assert (ws.path_for("a") / "README.md").read_text() == "hello\n"
    ws.close()


def test_subdirectory_warns(tmp_path):
    repo = make_repo(tmp_path / "repo")
    snap = open_snapshot(repo / "src")
    assert snap.repo == repo.resolve()
    assert any("inside the repository" in w for w in snap.warnings)
    snap.close()


def test_include_uncommitted_leaves_the_user_repo_untouched(tmp_path):
    repo = make_repo(tmp_path / "repo", {
        "README.md": "hello\n", "gone.txt": "bye\n", ".gitignore": "*.log\nsecret/\n",
        "bin/run": "#!/bin/sh\n",
    })
    (repo / "README.md").write_text("edited\n")
    (repo / "gone.txt").unlink()
    (repo / "new.txt").write_text("untracked\n")
    (repo / "deep/er").mkdir(parents=True)
    (repo / "deep/er/x.py").write_text("x = 1\n")
    (repo / "debug.log").write_text("ignored\n")
    (repo / "secret").mkdir()
    (repo / "secret/key").write_text("ignored too\n")
    (repo / "link").symlink_to("README.md")
    (repo / "bin/run").chmod(0o755)
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    (repo / "stashme.txt").write_text("s\n")
    git(repo, "stash", "push", "-u", "-q", "--", "stashme.txt")
    before = tree_digest(repo, mtimes=False)

    snap = open_snapshot(repo, include_uncommitted=True)
    assert snap.commit != snap.head
    assert not any("uncommitted" in w for w in snap.warnings)
    ws = Workspaces(snap, ["a"])
    p = ws.path_for("a")
    assert (p / "README.md").read_text() == "edited\n"
    assert not (p / "gone.txt").exists()
    assert (p / "new.txt").read_text() == "untracked\n"
    assert (p / "deep/er/x.py").read_text() == "x = 1\n"
    assert (p / "staged.txt").read_text() == "staged\n"
    assert os.readlink(p / "link") == "README.md"
    assert os.access(p / "bin/run", os.X_OK)
    assert not (p / "debug.log").exists() and not (p / "secret").exists()
    assert not (p / "stashme.txt").exists()
    assert status(p) == ""
    assert git(p, "rev-parse", "HEAD~1") == snap.head  # the changes are one commit on HEAD
    ws.close()
    assert tree_digest(repo, mtimes=False) == before
    assert git(repo, "stash", "list").count("\n") == 0 and git(repo, "stash", "list")


def test_include_uncommitted_without_changes_is_head(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a": "1\n", ".gitignore": "*.tmp\n"})
    (repo / "x.tmp").write_text("ignored\n")
    snap = open_snapshot(repo, include_uncommitted=True)
    assert snap.commit == snap.head
    snap.close()


def test_detached_head(tmp_path):
    repo = make_repo(tmp_path / "repo")
    first = git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("two\n")
    git(repo, "commit", "-qam", "second")
    git(repo, "checkout", "-q", "--detach", first)
    snap = open_snapshot(repo)
    assert snap.branch is None and snap.commit == first
    ws = Workspaces(snap, ["a"])
    p = ws.path_for("a")
    assert git(p, "rev-parse", "HEAD") == first
    assert subprocess.run(["git", "symbolic-ref", "-q", "HEAD"], cwd=p).returncode == 1
    assert (p / "README.md").read_text() == "hello\n"
    assert git(p, "rev-parse", "main") != first  # other branches come along, by value
    ws.close()


def test_symlinks(tmp_path):
    repo = make_repo(tmp_path / "repo", {"docs/a.md": "a\n"})
    (repo / "to-file").symlink_to("docs/a.md")
    (repo / "to-dir").symlink_to("docs")
    (repo / "dangling").symlink_to("nowhere")
    (repo / "absolute").symlink_to("/etc/hostname")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "links")
    ws = Workspaces(open_snapshot(repo), ["a"])
    p = ws.path_for("a")
    assert os.readlink(p / "to-file") == "docs/a.md"
    assert os.readlink(p / "to-dir") == "docs"
    assert os.readlink(p / "dangling") == "nowhere"
    assert os.readlink(p / "absolute") == "/etc/hostname"
    (p / "to-dir").unlink()  # dirty the checkout through a link's place
    (p / "to-dir").mkdir()
    (p / "to-dir" / "x").write_text("x")
    p = ws.path_for("a")
    assert os.readlink(p / "to-dir") == "docs" and status(p) == ""
    ws.close()


def test_submodule_is_an_empty_directory(tmp_path):
    sub = make_repo(tmp_path / "sub", {"lib.py": "x = 1\n"})
    repo = make_repo(tmp_path / "repo")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "vendor/lib")
    git(repo, "commit", "-qm", "add submodule")
    snap = open_snapshot(repo)
    assert snap.gitlinks == ("vendor/lib",)
    assert any("submodules" in w for w in snap.warnings)
    ws = Workspaces(snap, ["a"])
    p = ws.path_for("a")
    assert (p / "vendor/lib").is_dir() and list((p / "vendor/lib").iterdir()) == []
    assert (p / ".gitmodules").is_file() and status(p) == ""
    (p / "vendor/lib/hidden.txt").write_text("git status does not see me\n")
    p = ws.path_for("a")
    assert list((p / "vendor/lib").iterdir()) == []
    ws.close()


def test_lfs_pointer_stays_a_pointer(tmp_path):
    pointer = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
               "size 12345\n")
    repo = make_repo(tmp_path / "repo", {
        ".gitattributes": "*.bin filter=lfs diff=lfs merge=lfs -text\n", "model.bin": pointer,
    })
    marker = tmp_path / "filter-ran"
    # Filters in the user's own config would run, and write, if we let them.
    git(repo, "config", "filter.lfs.smudge", f"touch {marker}; cat")
    git(repo, "config", "filter.lfs.clean", f"touch {marker}; cat")
    git(repo, "config", "filter.lfs.process", f"touch {marker}; false")
    (repo / "model.bin").write_text(pointer.replace("12345", "54321"))
    snap = open_snapshot(repo, include_uncommitted=True)
    ws = Workspaces(snap, ["a"])
    p = ws.path_for("a")
    assert (p / "model.bin").read_text() == pointer.replace("12345", "54321")
    assert not marker.exists()
    ws.close()


# ---------------------------------------------------------------- turns


def test_reset_between_turns(tmp_path):
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n", ".gitignore": "build/\n"})
    snap = open_snapshot(repo)
    ws = Workspaces(snap, ["a", "b"])
    p = ws.path_for("a")
    refs = git(p, "for-each-ref")
    config = (p / ".git/config").read_bytes()
    # round 1: the agent scribbles and commits
    (p / "scratch.txt").write_text("round 1\n")
    (p / "build").mkdir()
    (p / "build/out.o").write_text("ignored\n")
    (p / "README.md").write_text("rewritten\n")
    git(p, "add", "-A")
    git(p, "commit", "-qm", "agent commit")
    git(p, "checkout", "-qb", "agent-branch")
    git(p, "tag", "agent-tag")
    git(p, "config", "core.worktree", str(repo))
    (p / "new-untracked").write_text("x\n")
    # round 2
    assert ws.path_for("a") == p
    assert not (p / "scratch.txt").exists() and not (p / "build").exists()
    assert not (p / "new-untracked").exists()
    assert (p / "README.md").read_text() == "hello\n"
    assert git(p, "rev-parse", "HEAD") == snap.commit
    assert git(p, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert git(p, "for-each-ref") == refs
    assert (p / ".git/config").read_bytes() == config
    assert status(p) == ""
    assert ws.stats["checks"] == 1 and ws.stats["resets"] + ws.stats["rebuilds"] == 1
    q = ws.path_for("b")  # untouched by a's turn
    assert (q / "README.md").read_text() == "hello\n"
    ws.close()


def test_clean_checkout_is_not_reset(tmp_path):
    ws = Workspaces(open_snapshot(make_repo(tmp_path / "repo")), ["a"])
    p = ws.path_for("a")
    git(p, "status")  # a read-only agent refreshes the index: not a reason to reset
    git(p, "log", "--oneline")
    ws.path_for("a")
    assert ws.stats["resets"] == 0 and ws.stats["rebuilds"] == 0 and ws.stats["checks"] == 1
    ws.close()


def test_hidden_changes_are_found(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    ws = Workspaces(open_snapshot(repo), ["a"])
    p = ws.path_for("a")
    git(p, "update-index", "--skip-worktree", "a.txt")
    (p / "a.txt").write_text("hidden by skip-worktree\n")
    git(p, "update-index", "--assume-unchanged", "b.txt")
    (p / "b.txt").write_text("hidden by assume-unchanged\n")
    (p / ".git/info").mkdir(exist_ok=True)
    (p / ".git/info/exclude").write_text("*\n")
    (p / "excluded.txt").write_text("x\n")
    p = ws.path_for("a")
    assert (p / "a.txt").read_text() == "a\n" and (p / "b.txt").read_text() == "b\n"
    assert not (p / "excluded.txt").exists()
    assert git(p, "ls-files", "-v") == "H a.txt\nH b.txt"
    ws.close()


def test_no_repo_workspaces_are_empty_and_stable(tmp_path):
    ws = Workspaces(None, ["a", "b"])
    a, b = ws.path_for("a"), ws.path_for("b")
    assert a != b and list(a.iterdir()) == [] and list(b.iterdir()) == []
    (a / "notes.txt").write_text("x")
    assert ws.path_for("a") == a and list(a.iterdir()) == []
    ws.close()
    assert not a.exists()


def test_judge_gets_an_empty_dir(tmp_path):
    ws = Workspaces(open_snapshot(make_repo(tmp_path / "repo")), ["a", "judge"], no_repo={"judge"})
    assert list(ws.path_for("judge").iterdir()) == []
    assert (ws.path_for("a") / "README.md").exists()
    ws.close()


def test_close_removes_everything(tmp_path, private_tmp):
    snap = open_snapshot(make_repo(tmp_path / "repo"), include_uncommitted=True)
    ws = Workspaces(snap, ["a", "b", "c"])
    p = ws.path_for("a")
    (p / "x").mkdir()
    (p / "x" / "y").write_text("y")
    (p / "x").chmod(0o500)  # an agent left a read-only directory
    ws.close()
    ws.close()
    assert list(private_tmp.iterdir()) == []
    with pytest.raises(WorkspaceError):
        ws.path_for("a")


def test_close_while_creating(tmp_path, private_tmp):
    ws = Workspaces(open_snapshot(make_repo(tmp_path / "repo")), [f"p{i}" for i in range(6)])
    ws.close()
    assert list(private_tmp.iterdir()) == []


def test_release_removes_in_background(tmp_path):
    ws = Workspaces(open_snapshot(make_repo(tmp_path / "repo")), ["a", "b"])
    a, b = ws.path_for("a"), ws.path_for("b")
    ws.release(["a"])
    deadline = time.monotonic() + 10
    while a.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not a.exists() and (b / "README.md").exists()
    with pytest.raises(WorkspaceError):
        ws.path_for("a")
    assert ws.stats["removals"] == 1
    ws.close()


def test_unknown_participant(tmp_path):
    ws = Workspaces(None, ["a"])
    with pytest.raises(WorkspaceError, match="no workspace"):
        ws.path_for("b")
    ws.close()


def test_odd_names_get_safe_distinct_dirs(tmp_path):
    ws = Workspaces(None, ["../x", "a/b", "a_b", ""])
    paths = {ws.path_for(n) for n in ["../x", "a/b", "a_b", ""]}
    assert len(paths) == 4 and all(ws.root in p.parents for p in paths)
    ws.close()


def test_two_debates_on_one_repo(tmp_path):
    repo = make_repo(tmp_path / "repo")
    one = Workspaces(open_snapshot(repo), ["a"])
    two = Workspaces(open_snapshot(repo, include_uncommitted=True), ["a"])
    p1, p2 = one.path_for("a"), two.path_for("a")
    assert p1 != p2 and status(p1) == "" and status(p2) == ""
    (p1 / "x").write_text("1")
    one.close()
    assert (two.path_for("a") / "README.md").exists()
    two.close()


# ---------------------------------------------------------------- leftovers, environment


def _fake_root(base: Path, name: str, pid: int, start: str | None) -> Path:
    root = base / f"disputatio-{name}"
    (root / "p").mkdir(parents=True)
    (root / "owner.json").write_text(json.dumps({"pid": pid, "start": start, "boot": boot_id()}))
    return root


def test_sweep_removes_dead_and_keeps_live(private_tmp):
    child = subprocess.Popen(["sleep", "30"])
    try:
        dead_proc = subprocess.Popen(["true"])
        dead_proc.wait()
        dead = _fake_root(private_tmp, "dead", dead_proc.pid, "1")
        reused = _fake_root(private_tmp, "reused", os.getpid(), "not-my-start-time")
        mine = _fake_root(private_tmp, "mine", os.getpid(), process_start(os.getpid()))
        other = _fake_root(private_tmp, "other", child.pid, process_start(child.pid))
        newborn = private_tmp / "disputatio-newborn"  # no marker yet
        newborn.mkdir()
        (private_tmp / "unrelated").mkdir()
        live_ws = Workspaces(None, ["a"])
        removed = sweep_leftovers()
        assert set(removed) == {dead, reused}
        assert mine.exists() and other.exists() and newborn.exists() and live_ws.root.exists()
        assert (private_tmp / "unrelated").exists()
        live_ws.close()
    finally:
        child.kill()
        child.wait()


def test_agent_env(tmp_path):
    repo = tmp_path / "repo"
    cwd = tmp_path / "ws" / "a" / "repo"
    base = {
        "PATH": f"{repo}/.venv/bin{os.pathsep}/usr/bin", "GIT_DIR": f"{repo}/.git",
        "GIT_WORK_TREE": str(repo), "VIRTUAL_ENV": f"{repo}/.venv", "HOME": "/home/u",
        "GIT_CONFIG_KEY_0": "core.hooksPath", "PWD": str(repo), "OLDPWD": str(repo),
    }
    env = agent_env(base, cwd, repo)
    assert env["PATH"] == "/usr/bin" and env["HOME"] == "/home/u"
    assert env["PWD"] == env["OLDPWD"] == str(cwd)
    assert env["GIT_CEILING_DIRECTORIES"] == str(cwd.parent)
    assert not any(str(repo) in v for v in env.values())
    assert "GIT_DIR" not in env and "GIT_CONFIG_KEY_0" not in env and "VIRTUAL_ENV" not in env


def test_sweep_after_kill_9(tmp_path, private_tmp):
    repo = make_repo(tmp_path / "repo")
    code = ("import sys, time\nfrom pathlib import Path\n"
            "from disputatio.snapshot import open_snapshot\n"
            "from disputatio.workspace import Workspaces\n"
            "ws = Workspaces(open_snapshot(Path(sys.argv[1])), ['a'])\nws.path_for('a')\n"
            "print(ws.root, ws.snapshot.root, flush=True)\ntime.sleep(120)\n")
    child = subprocess.Popen([sys.executable, "-c", code, str(repo)], stdout=subprocess.PIPE,
                             text=True, env={**os.environ, "TMPDIR": str(private_tmp)})
    try:
        roots = [Path(p) for p in child.stdout.readline().split()]
        assert len(roots) == 2 and all(r.exists() for r in roots)
        assert sweep_leftovers() == [] and all(r.exists() for r in roots)  # alive: kept
    finally:
        child.kill()
        child.wait()
    assert sorted(sweep_leftovers()) == sorted(roots)
    assert list(private_tmp.iterdir()) == []


def test_planted_symlinks_are_not_followed(tmp_path):
    repo = make_repo(tmp_path / "repo")
    decoy = make_repo(tmp_path / "decoy", {"src/app.py": "decoy\n", "README.md": "decoy\n"})
    before = tree_digest(decoy, mtimes=False)
    ws = Workspaces(open_snapshot(repo), ["a"])
    p = ws.path_for("a")
    shutil.rmtree(p / "src")
    (p / "src").symlink_to(decoy / "src")  # a tracked directory now leads elsewhere
    shutil.rmtree(p / ".git")
    (p / ".git").symlink_to(decoy / ".git")  # and so does .git
    p = ws.path_for("a")
    assert not (p / "src").is_symlink() and (p / "src/app.py").read_text() == "print('hi')\n"
    assert not (p / ".git").is_symlink() and status(p) == ""
    assert tree_digest(decoy, mtimes=False) == before
    ws.close()


def test_names_that_differ_only_in_case_or_in_odd_characters_get_their_own_dirs():
    """On a case-insensitive file system (macOS by default) "A" and "a" would be one
    directory: participants would share a checkout. Directory names differ ignoring case."""
    names = ["A", "a", "x y", "x_y", "X Y", "x/y", "ü", "Ü"]
    ws = Workspaces(None, names)
    try:
        dirs = [ws.path_for(n).parent.name for n in names]
        assert len({d.casefold() for d in dirs}) == len(names), dirs
    finally:
        ws.close()
