"""What the test modules share: running the CLI (in this process or as its own), lineups,
git repositories, the fake agents and the processes they leave, recorded CLI output, finished
debates made once and copied per test (``finished``), the real tier's debates (``real_tier``).
Test modules import from here (``from support import run_cli``), never from one another."""

from support.cli import (
    ROOT,
    Ran,
    config_file,
    invoke,
    one_path,
    run_cli,
    run_init,
    sim,
    write_config,
)
from support.finished import MadeDebates
from support.git import git, isolate_git, make_repo, tree_digest, write
from support.procs import (
    AGENT,
    FAKES,
    MARKER_VAR,
    alive,
    fake,
    gone,
    kill_survivors,
    marked_processes,
    own_python,
    wait_for,
)

__all__ = [
    "AGENT", "FAKES", "MARKER_VAR", "MadeDebates", "ROOT", "Ran", "alive", "config_file", "fake",
    "git", "gone", "invoke", "isolate_git", "kill_survivors", "make_repo", "marked_processes",
    "one_path", "own_python", "run_cli", "run_init", "sim", "tree_digest", "wait_for", "write",
    "write_config",
]
