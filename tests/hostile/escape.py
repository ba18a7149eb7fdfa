#!/usr/bin/env python3
"""Hostile agent: follows every link a checkout could hold back to another repository (git dir,
common dir, gitfile, commondir, alternates, worktree list, remote URLs, core.worktree, $PWD,
$OLDPWD, ancestors that are repositories, sibling checkouts) and writes into each."""

import os
import subprocess
from pathlib import Path

WHO = ["-c", "user.name=hostile", "-c", "user.email=hostile@example.invalid"]


def sh(*args, cwd=None):
    r = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


found: set[Path] = set()


def add(raw):
    if raw:
        p = Path(raw) if os.path.isabs(raw) else Path.cwd() / raw
        found.add(Path(os.path.normpath(p)))


for flag in ("--git-dir", "--git-common-dir", "--absolute-git-dir", "--show-toplevel",
             "--show-superproject-working-tree"):
    add(sh("git", "rev-parse", flag))
for var in ("PWD", "OLDPWD", "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR"):
    add(os.environ.get(var))
dotgit = Path(".git")
if dotgit.is_file():
    add(dotgit.read_text().removeprefix("gitdir:").strip())
for gitdir in list(found):
    for rel in ("commondir", "objects/info/alternates", "gitdir"):
        f = gitdir / rel
        if f.is_file():
            for line in f.read_text().splitlines():
                add(str((f.parent / line.strip()).resolve()) if line.strip() else "")
for line in sh("git", "worktree", "list", "--porcelain").splitlines():
    if line.startswith("worktree "):
        add(line.split(" ", 1)[1])
for line in sh("git", "config", "--get-regexp", r"(url|worktree|path)$").splitlines():
    value = line.split(" ", 1)[-1]
    if os.path.isabs(value):
        add(value)
for anc in Path.cwd().resolve().parents:  # an ancestor that is a repository
    if (anc / ".git").exists():
        add(str(anc))
for sib in Path.cwd().resolve().parent.parent.glob("*/*"):  # other participants' checkouts
    if (sib / ".git").exists():
        add(str(sib))

wrote = 0
for target in sorted(found):
    if not target.is_dir():
        continue
    try:
        (target / "ESCAPED-by-hostile.txt").write_text("escaped\n")
        wrote += 1
    except OSError:
        pass
    gitdir = target if (target / "HEAD").is_file() else target / ".git"
    if (gitdir / "HEAD").is_file():
        sh("git", "--git-dir", str(gitdir), *WHO, "update-ref", "refs/heads/escaped", "HEAD")
        sh("git", "--git-dir", str(gitdir), "config", "escaped.by", "hostile")
        try:
            with open(gitdir / "info" / "exclude", "a") as f:
                f.write("escaped\n")
        except OSError:
            pass
print(f"Looked around the repository ({len(found)} places, wrote {wrote}).")
