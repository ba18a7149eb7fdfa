"""Hostile agents in every checkout, two turns each: the user's repository must come out
byte-identical (files, .git, mtimes, remote, linked worktree), fsck-clean, with no temp path left,
and every checkout must be pristine again before each turn."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from disputatio.snapshot import open_snapshot
from disputatio.workspace import Workspaces
from support import hostile
from support.git import git, tree_digest
from support.hostile import HOSTILE, assert_untouched, user_digest

pytestmark = pytest.mark.process  # hostile agents as real processes against real repositories
NAMES = ["alpha", "beta"]
world = hostile.world  # the user's repository (a fixture)


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
