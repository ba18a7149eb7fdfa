"""The promise, end to end through the CLI: in a real debate whose participants are the hostile
scripts (tests/hostile/), agents read the user's repository but never change it, and disputatio
leaves no temp path or process behind. Plus the --repo warnings and errors a user sees."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from disputatio import ledger
from support import FAKES, MARKER_VAR, gone, hostile, invoke, kill_survivors, run_cli, write_config
from support.hostile import HOSTILE, assert_untouched, user_digest

world = hostile.world  # the user's repository with everything worth protecting (a fixture)
DIRTY_WARNING = ("warning: the working tree has uncommitted changes; agents see HEAD "
                 "(use --include-uncommitted)")


def command(script: Path, name: str | None = None, **env) -> dict:
    argv = [sys.executable, str(script)] if script.suffix == ".py" else [str(script)]
    return {"adapter": "command", "name": name or script.stem, "argv": argv,
            "env": {k: str(v) for k, v in env.items()}}


@pytest.mark.parametrize("include_uncommitted", [False, True], ids=["head", "uncommitted"])
@pytest.mark.process
def test_a_debate_of_hostile_agents_leaves_the_user_repo_untouched(home, world,
                                                                   include_uncommitted):
    assert len(HOSTILE) >= 6
    # rewrite_config_and_hooks, with hooks that also say who ran them (see the fake)
    scripts = [FAKES / "hooks_that_tell.sh" if s.stem == "rewrite_config_and_hooks" else s
               for s in HOSTILE]
    participants = [command(s, HOSTILE_CANARY=world["canary"]) for s in scripts]
    participants.append(command(FAKES / "observe.sh", "observer"))
    cfg = write_config(home / "d.yaml", participants)
    before = user_digest(world)
    marker = uuid.uuid4().hex
    flags = ["--include-uncommitted"] if include_uncommitted else []
    try:
        r = run_cli("Review the changes in this branch", "--repo", str(world["repo"]),
                    "--rounds", "2", "--config", str(cfg), "--timeout", "1", "-q", *flags,
                    cwd=home, env={"TMPDIR": str(world["tmp"]), MARKER_VAR: marker})
        assert r.returncode == 0, r.stderr
        assert gone(marker)
    finally:
        kill_survivors(marker)

    report = Path(r.stdout.strip())
    assert report.name == "final-report.md" and report.is_file()
    lines = r.stderr.splitlines()
    assert all(line.startswith("warning: ") for line in lines), lines  # -q: warnings only
    assert [line for line in lines if "uncommitted" in line] == \
        ([] if include_uncommitted else [DIRTY_WARNING])
    events = ledger.load(report.parent / "events.jsonl")
    done = [e.data for e in events if e.type == "turn_completed"]
    assert len(done) == 3 * len(participants) + 2  # 3 phases, respondeo, redactio
    assert all(t["ok"] for t in done), [(t["turn_id"], t["message"]) for t in done if not t["ok"]]

    # every turn of the observer saw the same pristine snapshot, and the right one
    seen = {t["text"] for t in done if t["role"] == "observer"}
    assert len(seen) == 1, seen
    fields = dict(kv.split("=", 1) for kv in seen.pop().split())
    if include_uncommitted:
        assert fields["subject"].startswith("disputatio:_uncommitted_changes")
        assert (fields["readme"], fields["staged"], fields["untracked"]) == \
            ("#_project_(edited)", "staged", "untracked")
    else:
        assert fields["subject"] == "second" and fields["readme"] == "#_project"
        assert (fields["staged"], fields["untracked"]) == ("-", "-")
    assert fields["ignored"] == "-" and fields["remotes"] == "0"

    assert_untouched(world, before)
    assert list(world["hooks_ran"].iterdir()) == []
    # escape.py's git may run hooks a sibling agent planted in its own checkout (agents are
    # not isolated from each other); disputatio's own git commands must never run one
    callers = {f.name: f.read_text() for f in world["canary"].iterdir()}
    assert all(c.strip() and "-m disputatio" not in c for c in callers.values()), callers


def _no_commits(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def _plain_dir(path: Path) -> Path:
    path.mkdir()
    return path


def _a_file(path: Path) -> Path:
    path.write_text("x\n")
    return path


@pytest.mark.parametrize(("make", "says"), [
    (lambda p: p, "path does not exist"),
    (_a_file, "not a directory"),
    (_plain_dir, "not a git repository"),
    (_no_commits, "repository has no commits"),
], ids=["missing", "file", "not-a-repo", "no-commits"])
def test_a_bad_repo_is_one_line_exit_2_and_nothing_is_created(home, tmp_path, make, says):
    repo = make(tmp_path / "given")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    cfg = write_config(home / "d.yaml", [{"adapter": "simulated", "name": "a"},
                                         {"adapter": "simulated", "name": "b"}])
    r = invoke("q", "--repo", str(repo), "--config", str(cfg), cwd=home,
                env={"TMPDIR": str(tmp), "GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.splitlines() == [f"error: {repo}: {says}"]
    assert not (home / ".debate").exists()
    assert list(tmp.iterdir()) == []
