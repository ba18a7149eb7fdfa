"""Git, run safely, and the environments around it: every git command we run goes through
:func:`git` with :data:`SAFE_FLAGS` (no hook, fsmonitor or automatic gc runs), in the user's
repository with :func:`user_env` (their filter drivers off), in our private ones with
:func:`own_env` (no user config at all); an agent gets :func:`agent_env`, where nothing locates
a repository. Shared by snapshot.py, workspace.py, review.py and the engine.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path

# Settings that would run code or write files, off for every git command we run.
_SAFE = ("core.hooksPath=/dev/null", "core.fsmonitor=false", "core.splitIndex=false",
         "core.untrackedCache=false", "gc.auto=0", "maintenance.auto=false",
         "submodule.recurse=false", "commit.gpgSign=false")
SAFE_FLAGS = [a for kv in _SAFE for a in ("-c", kv)]
# A filter driver's keys (gitattributes(5)): the commands git would run on a path's bytes.
_FILTER_KEY = re.compile(rb"filter\.(.+)\.(?:clean|smudge|process|required)", re.S)
# Kept from our environment: where git lives, and the user's fence on repository discovery (a
# home directory that is itself a repository must not swallow a --repo that is not one).
_KEEP = {"GIT_EXEC_PATH", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"}


class WorkspaceError(Exception):
    """A one-line, user-facing problem with the repository or the workspaces; the CLI exits 2."""


# ---------------------------------------------------------------- running git


class Procs:
    """Git children of one owner, so close() can kill them instead of waiting them out."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # re-entrant: close() may run from a signal handler
        self._live: set[subprocess.Popen] = set()
        self.closed = False

    def run(self, argv: list[str], env: dict[str, str], cwd: Path | None,
            input: bytes | None) -> subprocess.CompletedProcess:
        with self._lock:
            if self.closed:
                raise WorkspaceError("the workspaces are closed")
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
                                    if input is None else subprocess.PIPE)
            self._live.add(proc)
        try:
            out, err = proc.communicate(input)
        finally:
            with self._lock:
                self._live.discard(proc)
        return subprocess.CompletedProcess(argv, proc.returncode, out, err)

    def kill_all(self) -> None:
        with self._lock:
            self.closed = True
            for proc in self._live:
                proc.kill()


_UNOWNED = Procs()


def git(args: list[str], env: dict[str, str], *, cwd: Path | None = None,
        input: bytes | None = None, check: bool = True,
        procs: Procs | None = None) -> subprocess.CompletedProcess:
    """Run git; with check, a failure becomes a one-line WorkspaceError."""
    try:
        res = (procs or _UNOWNED).run(["git", *args], env, cwd, input)
    except FileNotFoundError:
        raise WorkspaceError("git is not installed (not found on PATH)") from None
    if check and res.returncode != 0:
        verb = next((a for a in args if not a.startswith("-") and "=" not in a), "?")
        raise WorkspaceError(f"git {verb} failed: {one_line(res.stderr)}")
    return res


def one_line(raw: bytes) -> str:
    """The telling line of git's stderr (its fatal:/error: line), else the first one."""
    lines = [ln.strip() for ln in raw.decode(errors="replace").splitlines() if ln.strip()]
    pick = next((ln for ln in lines if ln.startswith(("fatal:", "error:"))), None)
    return pick.split(":", 1)[1].strip() if pick else (lines[0][:300] if lines else "no message")


def base_env() -> dict[str, str]:
    """Our environment minus GIT_* variables: an inherited GIT_DIR, GIT_INDEX_FILE or
    GIT_CONFIG_PARAMETERS (as when run from a hook or an alias) would redirect our commands."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEEP}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_LFS_SKIP_SMUDGE="1", GIT_OPTIONAL_LOCKS="0",
               LC_ALL="C", LANGUAGE="C")
    return env


def user_env(cwd: Path) -> dict[str, str]:
    """For git in the user's repository. Their config is kept (their excludes decide what is
    "ignored", which keeps secrets out), but every filter driver it names, in any scope, is
    switched off: clean, smudge and the long-running ``process`` kind git-lfs uses would run
    the user's programs (git-lfs writes into .git/lfs; a missing one fails the command). Empty
    commands make git take bytes as they are; ``required=false`` makes that no error. Set as
    environment config, which outranks every config file as ``-c`` does but takes any key: a
    driver's name may hold ``=`` or spaces, which ``-c`` cannot carry.

    Diff drivers (textconv, external diff) are not listed: no command we run in the user's
    repository compares contents (porcelain status never does)."""
    env = base_env()
    res = git(["config", "-z", "--list"], env, cwd=cwd, check=False)
    if res.returncode != 0:  # a config file git cannot parse
        raise WorkspaceError(one_line(res.stderr))
    names = {m.group(1) for e in res.stdout.split(b"\0")
             if (m := _FILTER_KEY.fullmatch(e.split(b"\n", 1)[0]))}
    pairs = [(b"filter." + n + b"." + k, v) for n in sorted(names)
             for k, v in ((b"clean", b""), (b"smudge", b""), (b"process", b""),
                          (b"required", b"false"))]
    for i, (k, v) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = os.fsdecode(k), os.fsdecode(v)
    if pairs:
        env["GIT_CONFIG_COUNT"] = str(len(pairs))
    return env


def own_env(home: Path) -> dict[str, str]:
    """For our private repositories: no system or global config (nor ~/.gitconfig on an old git),
    so nothing the user or an agent configured there can run or redirect anything."""
    return base_env() | {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                         "HOME": str(home), "XDG_CONFIG_HOME": str(home)}


# ---------------------------------------------------------------- an agent's environment

# Variables that tell git where a repository, an index, objects or config are.
_GIT_LOCATORS = {
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
    "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_SHALLOW_FILE",
    "GIT_GRAFT_FILE", "GIT_REPLACE_REF_BASE", "GIT_QUARANTINE_PATH", "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
}


def agent_env(base: Mapping[str, str], cwd: Path, repo: Path | None = None) -> dict[str, str]:
    """An agent's environment for its workspace: PWD/OLDPWD there, no variable locating a git
    repository, discovery fenced at the workspace's parent (a deleted .git cannot make git find
    another repository higher up) and, given the user's repository, no value naming it: PATH-like
    lists lose the entries inside it (a project's .venv/bin), other such variables go."""
    env = {k: v for k, v in base.items()
           if k not in _GIT_LOCATORS and not k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))}
    needles = {str(repo), os.path.realpath(repo)} if repo is not None else set()
    for k, v in list(env.items()):
        if any(n in v for n in needles):
            kept = os.pathsep.join(p for p in v.split(os.pathsep)
                                   if not any(p == n or p.startswith(n + os.sep) for n in needles))
            if kept and not any(n in kept for n in needles):
                env[k] = kept
            else:
                del env[k]
    env.update(PWD=str(cwd), OLDPWD=str(cwd), GIT_CEILING_DIRECTORIES=str(Path(cwd).parent),
               GIT_LFS_SKIP_SMUDGE="1")
    return env
