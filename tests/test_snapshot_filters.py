"""Repositories whose config names programs git runs on its own: filter drivers (clean, smudge,
and the long-running ``process`` kind git-lfs uses), diff drivers, an fsmonitor hook. The
snapshot, the checkouts and their resets must work for them and run none of those programs;
the user's repository stays byte-identical."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from disputatio import ledger
from disputatio.gitenv import WorkspaceError
from disputatio.snapshot import open_snapshot
from disputatio.workspace import Workspaces
from support import git, invoke, isolate_git, tree_digest, write, write_config

POINTER = ("version https://git-lfs.github.com/spec/v1\n"
           "oid sha256:{}\n"
           "size 12345\n")
OLD_POINTER = POINTER.format("4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393")
NEW_POINTER = POINTER.format("a3f1c0de5b7e9d24f6a8b0c2e4d6f8a0b2c4d6e8f0a2b4c6d8e0f2a4b6c8d0e2")
# Driver names as they appear in .gitattributes; "we=ird.v2" cannot be given with `git -c`.
DRIVERS = ("media", "crypt", "we=ird.v2", "lfs")


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A repository using four filter drivers: each of their commands leaves a marker and fails
    (as a missing git-lfs does), ``media`` and ``lfs`` are the ``process`` kind; ``lfs`` is
    configured globally, as ``git lfs install`` does. The working tree has an uncommitted
    change to a filtered file, a filtered file git must re-read (same size, new mtime) and a
    new filtered file."""
    tmp = isolate_git(tmp_path, monkeypatch, "User", "user@example.com")
    home = tmp_path / "home"
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    write(repo, {".gitattributes": "*.bin filter=media -text\n*.enc filter=crypt\n"
                                   "*.odd filter=we=ird.v2\n*.psd filter=lfs -text\n",
                 "model.bin": OLD_POINTER, "secret.enc": "ciphertext\n", "x.odd": "odd\n",
                 "art.psd": OLD_POINTER, "README.md": "# project\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    for name in DRIVERS:  # configured after the commit, so committing ran none of them
        scope = ["--global"] if name == "lfs" else []
        for key in ("clean", "smudge", "process"):
            git(repo, "config", *scope, f"filter.{name}.{key}",
                f"touch '{markers}/{name}-{key}'; exit 1")
        git(repo, "config", *scope, f"filter.{name}.required", "true")
    for name in ("crypt", "we=ird.v2"):  # the clean/smudge kind, as git-crypt
        git(repo, "config", "--unset", f"filter.{name}.process")
    write(repo, {"model.bin": NEW_POINTER, "new.bin": "raw new bytes\n", "art.psd": "A" * 900})
    index_mtime = (repo / ".git" / "index").stat().st_mtime
    for rel in ("secret.enc", "x.odd", "model.bin"):  # stale stat data: git must read the bytes
        os.utime(repo / rel, (index_mtime + 7, index_mtime + 7))
    return {"repo": repo, "markers": markers, "tmp": tmp, "home": home}


def drivers_off() -> dict[str, str]:
    """Our environment with every driver of the world off (as config variables: "we=ird.v2"
    cannot be given with -c), for looking at the user's repository without running them."""
    keys = [(f"filter.{n}.{k}", "") for n in DRIVERS for k in ("clean", "smudge", "process")]
    keys += [(f"filter.{n}.required", "false") for n in DRIVERS]
    env = {**os.environ, "GIT_CONFIG_COUNT": str(len(keys))}
    for i, (k, v) in enumerate(keys):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = k, v
    return env


def user_state(world: dict) -> dict:
    """Every byte and mtime of the repository (.git's index, config, hooks and refs included),
    the home directory (global config), and git's view of it, taken with every driver off."""
    status = git(world["repo"], "--no-optional-locks", "-c", "core.fsmonitor=false", "status",
                 "--porcelain", "--ignored", env=drivers_off())
    return {"repo": tree_digest(world["repo"]), "home": tree_digest(world["home"]),
            "status": status, "refs": git(world["repo"], "for-each-ref")}


def checkout_bytes(p: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted(p.iterdir()) if f.is_file()}


@pytest.mark.parametrize("include_uncommitted", [False, True], ids=["head", "uncommitted"])
def test_filter_drivers_never_run(world, include_uncommitted):
    repo, before = world["repo"], user_state(world)
    assert "M model.bin" in before["status"] and "?? new.bin" in before["status"]

    snap = open_snapshot(repo, include_uncommitted=include_uncommitted)
    dirty_warning = any("uncommitted changes" in w for w in snap.warnings)
    assert dirty_warning is not include_uncommitted
    ws = Workspaces(snap, ["a", "b"])
    p = ws.path_for("a")
    expected = {".gitattributes": (repo / ".gitattributes").read_bytes(),
                "README.md": b"# project\n", "secret.enc": b"ciphertext\n", "x.odd": b"odd\n",
                "model.bin": OLD_POINTER.encode(), "art.psd": OLD_POINTER.encode()}
    if include_uncommitted:  # the working tree's bytes, as git stores them without filters
        expected |= {"model.bin": NEW_POINTER.encode(), "new.bin": b"raw new bytes\n",
                     "art.psd": b"A" * 900}
    assert checkout_bytes(p) == expected
    assert git(p, "status", "--porcelain", env=drivers_off()) == ""

    # A turn that changes filtered files, and one that configures a driver of its own: the
    # reset before the next turn restores the bytes and runs neither the user's nor the agent's.
    (p / "model.bin").write_text(OLD_POINTER.replace("12345", "99999"))
    (p / "secret.enc").write_text("tampered!!\n")
    git(p, "config", "filter.crypt.clean", f"touch '{world['markers']}/agent-clean'; cat")
    git(p, "config", "filter.crypt.smudge", f"touch '{world['markers']}/agent-smudge'; cat")
    p = ws.path_for("a")
    assert checkout_bytes(p) == expected
    assert checkout_bytes(ws.path_for("b")) == expected
    ws.close()

    assert sorted(os.listdir(world["markers"])) == []
    assert user_state(world) == before
    assert list(world["tmp"].iterdir()) == []


def test_other_programs_named_in_config_never_run(world):
    """An fsmonitor hook and diff drivers (textconv, external diff) in the user's config."""
    repo, markers = world["repo"], world["markers"]
    hook = world["home"] / "fsmonitor-hook"
    hook.write_text(f"#!/bin/sh\ntouch '{markers}/fsmonitor'\nexit 1\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hook))
    (repo / ".gitattributes").write_text((repo / ".gitattributes").read_text()
                                         + "*.md diff=conv\n")
    git(repo, "config", "diff.conv.textconv", f"touch '{markers}/textconv'; cat")
    git(repo, "config", "diff.conv.command", f"touch '{markers}/diff-command'")
    git(repo, "config", "--global", "diff.external", f"touch '{markers}/diff-external'")
    before = user_state(world)
    for include_uncommitted in (False, True):
        snap = open_snapshot(repo, include_uncommitted=include_uncommitted)
        ws = Workspaces(snap, ["a"])
        p = ws.path_for("a")
        (p / "README.md").write_text("# changed by an agent\n")
        assert (ws.path_for("a") / "README.md").read_text() == "# project\n"
        ws.close()
    assert sorted(os.listdir(markers)) == []
    assert user_state(world) == before


def test_a_config_git_cannot_parse_is_one_line(world):
    (world["repo"] / ".git" / "config").write_text("[core\n")
    with pytest.raises(WorkspaceError) as exc:
        open_snapshot(world["repo"])
    assert str(exc.value) == f"{world['repo']}: bad config line 1 in file .git/config"
    assert list(world["tmp"].iterdir()) == []


# ---------------------------------------------------------------- with the real git-lfs


@pytest.mark.skipif(shutil.which("git-lfs") is None,
                    reason="git-lfs is not installed (Debian: apt-get install git-lfs)")
def test_real_git_lfs_repository(tmp_path, monkeypatch):
    """A repository as git-lfs makes it: objects in .git/lfs, pointers in the commits, the
    filter in the global config. git-lfs is reached through a PATH shim that records each run."""
    world = {"tmp": tmp_path / "tmp", "home": tmp_path / "home", "repo": tmp_path / "repo",
             "markers": tmp_path / "markers"}
    for d in ("tmp", "home", "markers"):
        world[d].mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(world["tmp"]))
    monkeypatch.setenv("HOME", str(world["home"]))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "User")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "user@example.com")
    repo = world["repo"]
    git(tmp_path, "lfs", "install", "--skip-repo")
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    git(repo, "lfs", "track", "*.psd")
    (repo / "art.psd").write_bytes(os.urandom(5000))
    (repo / "big.psd").write_bytes(os.urandom(7000))
    for rel in ("art.psd", "big.psd"):  # older than the index: not "racily clean" after add
        os.utime(repo / rel, (os.stat(repo).st_mtime - 60,) * 2)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    pointers = {rel: git(repo, "cat-file", "blob", f"HEAD:{rel}", strip=False).encode()
                for rel in ("art.psd", "big.psd")}
    assert all(p.startswith(b"version https://git-lfs.github.com/spec/v1\n")
               for p in pointers.values())
    assert (repo / ".git" / "lfs" / "objects").is_dir()

    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "git-lfs").write_text(f"#!/bin/sh\ntouch '{world['markers']}/git-lfs'-$$\n"
                                  f"exec '{shutil.which('git-lfs')}' \"$@\"\n")
    (shim / "git-lfs").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    edited = os.urandom(5000)
    (repo / "art.psd").write_bytes(edited)  # an uncommitted edit of an LFS file
    before = {"repo": tree_digest(repo), "home": tree_digest(world["home"])}

    for include_uncommitted in (False, True):
        snap = open_snapshot(repo, include_uncommitted=include_uncommitted)
        ws = Workspaces(snap, ["a"])
        p = ws.path_for("a")
        got = {rel: (p / rel).read_bytes() for rel in ("art.psd", "big.psd")}
        assert got == (pointers | {"art.psd": edited} if include_uncommitted else pointers)
        (p / "big.psd").write_bytes(b"changed by an agent")
        assert (ws.path_for("a") / "big.psd").read_bytes() == pointers["big.psd"]
        ws.close()
    assert sorted(os.listdir(world["markers"])) == []
    assert {"repo": tree_digest(repo), "home": tree_digest(world["home"])} == before
    assert list(world["tmp"].iterdir()) == []


# ---------------------------------------------------------------- through the CLI


@pytest.mark.parametrize("include_uncommitted", [False, True], ids=["head", "uncommitted"])
def test_a_debate_on_a_filtered_repository(home, world, include_uncommitted):
    """As a user runs it: exit 0, agents read the pointer they should, no driver ran."""
    before = user_state(world)
    reader = {"adapter": "command", "argv": ["sh", "-c", "sed -n 2p model.bin"]}
    cfg = write_config(home / "d.yaml", [reader | {"name": "a"}, reader | {"name": "b"}])
    flags = ["--include-uncommitted"] if include_uncommitted else []
    r = invoke("Review this", "--repo", str(world["repo"]), "--config", str(cfg), "-q",
                *flags, cwd=home, env={"TMPDIR": str(world["tmp"])})
    assert r.returncode == 0, r.stderr
    events = ledger.load(Path(r.stdout.strip()).parent / "events.jsonl")
    done = [e.data for e in events if e.type == "turn_completed"]
    seen = {t["text"].strip() for t in done if t["role"] in ("a", "b")}
    assert seen == {(NEW_POINTER if include_uncommitted else OLD_POINTER).splitlines()[1]}
    assert sorted(os.listdir(world["markers"])) == []
    assert user_state(world) == before
    assert list(world["tmp"].iterdir()) == []
