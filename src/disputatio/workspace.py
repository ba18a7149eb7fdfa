"""One isolated checkout per participant, made once per debate and reset before each turn.

A checkout is a standalone repository: its ``.git`` is a byte copy of the snapshot's private
mirror (snapshot.py), so it shares no refs, config, hooks, index or objects with the user's
repository, and no gitfile, alternates entry, remote or path in its config leads back.

Cost (file creation dominates): one checkout per participant, all made in background threads as
soon as Workspaces exists; before a turn a stat walk of ``.git`` plus one ``git status`` (~0.1 s
on 20,000 files) decide whether anything needs a reset; removal runs in the background.

Private temp root (temproots.py: 0700, prefix ``disputatio-``)::

    owner.json              pid + process start time, read by sweep_leftovers()
    p/<name>/<repo name>/   a participant's checkout (p/<name>/workspace/: an empty dir)
"""

from __future__ import annotations

import atexit
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from disputatio.gitenv import SAFE_FLAGS, Procs, WorkspaceError, git, one_line, own_env
from disputatio.snapshot import Snapshot, copy_file
from disputatio.temproots import make_root, remove_root, remove_tree


@dataclass(eq=False)
class _Slot:
    name: str
    parent: Path
    path: Path
    repo: bool
    ready: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    error: WorkspaceError | None = None
    fresh: bool = True  # nobody has used it yet: the first path_for need not check it
    released: bool = False
    gitdir_print: tuple | None = None  # .git as we left it (index aside)
    index: bytes = b""  # the index as we left it, put back if an agent touched it
    index_stat: tuple | None = None
    check_s: float = 0.0


class Workspaces:
    """The participants' workspaces for one debate; owns the snapshot (close() removes it)."""

    def __init__(self, snapshot: Snapshot | None, names: list[str],
                 no_repo: Iterable[str] = frozenset()) -> None:
        if snapshot is not None and snapshot.closed:
            raise WorkspaceError("the repository snapshot was already closed")
        self.snapshot = snapshot
        self.root = make_root("workspaces")
        self._env = own_env(self.root)
        self._procs = Procs()
        self._lock = threading.RLock()  # re-entrant: close() may run from a signal handler
        self._closed = False
        self._threads: list[threading.Thread] = []
        self._t0 = time.monotonic()
        # For benchmarks: seconds summed over threads (ready_s: wall time until the last
        # checkout was ready; check_s/reset_s: spent in path_for) and counts.
        self.stats: dict = dict.fromkeys(("create_s", "ready_s", "check_s", "reset_s",
                                          "remove_s"), 0.0)
        self.stats |= dict.fromkeys(("checkouts", "checks", "resets", "rebuilds", "removals"), 0)
        (self.root / "p").mkdir(mode=0o700)
        self._anchor = _ident(self.root / "p")
        self._mirror_print = fingerprint(snapshot.git_dir, frozenset()) if snapshot else None
        base = _safe_name(snapshot.repo.name.removesuffix(".git"), set(), "repo") \
            if snapshot else ""
        no_repo = set(no_repo)
        self._slots: dict[str, _Slot] = {}
        # numbered, not named: an agent's answers quote its working directory, and the judge
        # must not read a debater's name (by default its CLI's) in them
        for i, name in enumerate(dict.fromkeys(names), start=1):
            parent = self.root / "p" / str(i)
            repo = snapshot is not None and name not in no_repo
            self._slots[name] = _Slot(name, parent, parent / (base if repo else "workspace"),
                                      repo)
        atexit.register(self.close)
        for slot in self._slots.values():
            self._spawn(self._create, slot)

    def path_for(self, name: str) -> Path:
        """The participant's directory, pristine: waits for its creation, then (from the second
        call on) resets it if, and only if, the last turn left anything behind."""
        slot = self._slots.get(name)
        if slot is None:
            raise WorkspaceError(f"no workspace for participant {name!r}")
        slot.ready.wait()
        if slot.error:
            raise slot.error
        with slot.lock:
            if self._closed or slot.released:
                raise WorkspaceError(f"the workspace of {name} was already removed")
            if slot.fresh:
                slot.fresh = False
                return slot.path
            if _ident(self.root / "p") != self._anchor:
                raise WorkspaceError(f"the workspace directory {self.root} was replaced")
            os.chmod(self.root / "p", 0o700)
            if slot.repo:
                self._restore(slot)
            else:
                self._empty(slot)
        return slot.path

    def release(self, names: Iterable[str]) -> None:
        """Remove these participants' workspaces in the background (after their last turn)."""
        for name in names:
            slot = self._slots.get(name)
            if slot is not None and not slot.released:
                slot.released = True
                self._spawn(self._remove, slot)

    def close(self) -> None:
        """Stop background work, remove every workspace and the snapshot. Idempotent, and safe
        from a signal handler or atexit: git children are killed, not waited for."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            threads = list(self._threads)
        atexit.unregister(self.close)
        self._procs.kill_all()
        for t in threads:
            if t is not threading.current_thread():
                t.join(timeout=30)  # never hang an exit path
        for slot in self._slots.values():
            slot.ready.set()  # wake anyone waiting for a checkout that will never come
        t0 = time.monotonic()
        remove_root(self.root)
        remove_tree(self.root)  # in case a racing path_for re-created an entry
        self._add(remove_s=time.monotonic() - t0)
        if self.snapshot is not None:
            self.snapshot.close()

    # ------------------------------------------------------------ background work

    def _spawn(self, fn: Callable[[_Slot], None], slot: _Slot) -> None:
        with self._lock:
            if not self._closed:
                t = threading.Thread(target=fn, args=(slot,), daemon=True,
                                     name=f"workspace{fn.__name__}-{slot.name}")
                self._threads.append(t)
                t.start()

    def _create(self, slot: _Slot) -> None:
        t0 = time.monotonic()
        try:
            slot.parent.mkdir(mode=0o700)
            if slot.repo:
                self._checkout(slot)
            else:
                slot.path.mkdir()
        except WorkspaceError as exc:
            slot.error = exc
        except OSError as exc:
            slot.error = WorkspaceError(f"could not create the workspace of {slot.name}: {exc}")
        finally:
            self._add(create_s=time.monotonic() - t0, checkouts=int(slot.repo))
            with self._lock:
                self.stats["ready_s"] = max(self.stats["ready_s"], time.monotonic() - self._t0)
            slot.ready.set()

    def _remove(self, slot: _Slot) -> None:
        slot.ready.wait()
        with slot.lock:
            t0 = time.monotonic()
            remove_tree(slot.parent)
            self._add(remove_s=time.monotonic() - t0, removals=1)

    # ------------------------------------------------------------ checkouts

    def _checkout(self, slot: _Slot) -> None:
        """A fresh checkout: the mirror copied as .git, then the tree written (the costly part)."""
        slot.path.mkdir()
        self._copy_mirror(slot.path / ".git")
        self._git(slot, ["read-tree", "-u", "--reset", "HEAD"])
        self._remember(slot)

    def _restore(self, slot: _Slot) -> None:
        """Reset the checkout if the last turn left anything behind; whatever gets in the way
        (unreadable or read-only dirs, .git gone, a file where a dir was) means a fresh one."""
        t0, slot.check_s = time.monotonic(), 0.0
        try:
            self._tidy_parent(slot)
            if not _is_dir(slot.path):
                raise WorkspaceError("the checkout directory is gone")
            self._reset_if_dirty(slot, t0)
        except (OSError, WorkspaceError):
            if self._closed:
                raise WorkspaceError("the workspaces are closed") from None
            remove_tree(slot.path)
            self._checkout(slot)
            self._add(rebuilds=1)
        self._add(reset_s=time.monotonic() - t0 - slot.check_s)

    def _reset_if_dirty(self, slot: _Slot, t0: float) -> None:
        """Trust nothing the agent could change: ``.git`` is compared with how we left it (a
        changed config, hook, ref, packed-refs, worktree entry, gitfile or symlink all show) and
        the index is put back byte for byte if touched, so skip-worktree or assume-unchanged bits
        cannot hide files; then ``git status`` tells the truth."""
        gitdir = slot.path / ".git"
        if fingerprint(gitdir) != slot.gitdir_print:
            remove_tree(gitdir)
            self._copy_mirror(gitdir)
            self._write_index(slot)
            slot.gitdir_print = fingerprint(gitdir)
        elif _stat_key(gitdir / "index") != slot.index_stat:
            self._write_index(slot)
        dirty = self._dirty(slot)
        slot.check_s = time.monotonic() - t0
        self._add(checks=1, check_s=slot.check_s)
        if dirty:
            clean = self._git(slot, ["clean", "-ffdxq"])
            if clean.stderr.strip():  # "failed to remove ...": start over
                raise WorkspaceError(one_line(clean.stderr))
            self._git(slot, ["read-tree", "-u", "--reset", "HEAD"])
            for p in self._gitlink_paths(slot):
                if _dirty_gitlink(p):
                    remove_tree(p)
                    p.mkdir()
            self._remember(slot)
            self._add(resets=1)

    def _dirty(self, slot: _Slot) -> bool:
        """``git status --porcelain --ignored``, allowed to refresh the index: right after a
        checkout most entries are "racily clean" (as new as the index) and would be re-hashed by
        every status, and rewritten by every reset, until one refresh records their stat data.
        Submodules are ignored: git would run itself inside a submodule directory the agent
        filled with a repository of its own, with that repository's config (a filter driver),
        outside the fence; their directories are checked below, without git."""
        res = self._git(slot, ["status", "--porcelain", "--ignored", "--untracked-files=normal",
                               "--ignore-submodules=all"], check=False, locks=True)
        if res.returncode != 0 or res.stdout.strip() or res.stderr.strip():
            return True
        index = slot.path / ".git" / "index"
        if _stat_key(index) != slot.index_stat:  # refreshed stat data only: keep it
            slot.index, slot.index_stat = index.read_bytes(), _stat_key(index)
        # git status and clean do not look inside an uninitialised submodule's directory
        return any(_dirty_gitlink(p) for p in self._gitlink_paths(slot))

    def _gitlink_paths(self, slot: _Slot) -> list[Path]:
        gitlinks = self.snapshot.gitlinks if self.snapshot else ()
        return [p for rel in gitlinks if (p := _no_links_below(slot.path, rel)) is not None]

    def _empty(self, slot: _Slot) -> None:
        self._tidy_parent(slot)
        if not _is_dir(slot.path):
            remove_tree(slot.path)
            slot.path.mkdir()
        for entry in os.scandir(slot.path):
            remove_tree(Path(entry.path))

    def _tidy_parent(self, slot: _Slot) -> None:
        """Whatever the agent left next to its checkout (``git worktree add ../x``) goes."""
        if not _is_dir(slot.parent):
            remove_tree(slot.parent)
            slot.parent.mkdir(mode=0o700)
        os.chmod(slot.parent, 0o700)
        for entry in os.scandir(slot.parent):
            if entry.name != slot.path.name:
                remove_tree(Path(entry.path))

    def _copy_mirror(self, gitdir: Path) -> None:
        assert self.snapshot is not None
        if fingerprint(self.snapshot.git_dir, frozenset()) != self._mirror_print:
            raise WorkspaceError("the private mirror of the repository was modified during the "
                                 "debate; cannot restore a checkout")
        copy_tree(self.snapshot.git_dir, gitdir, stop=lambda: self._closed)

    def _remember(self, slot: _Slot) -> None:
        index = slot.path / ".git" / "index"
        slot.index, slot.index_stat = index.read_bytes(), _stat_key(index)
        slot.gitdir_print = fingerprint(slot.path / ".git")

    def _write_index(self, slot: _Slot) -> None:
        index = slot.path / ".git" / "index"
        remove_tree(index)  # unlink first, and O_EXCL: never write through a planted symlink
        with open(os.open(index, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), "wb") as f:
            f.write(slot.index)
        slot.index_stat = _stat_key(index)

    def _git(self, slot: _Slot, args: list[str], check: bool = True, locks: bool = False):
        """Always an explicit --git-dir and --work-tree (a core.worktree or gitfile the agent
        left cannot redirect us), hooks and fsmonitor off."""
        env = self._env | {"GIT_OPTIONAL_LOCKS": "1"} if locks else self._env
        return git(["--git-dir", str(slot.path / ".git"), "--work-tree", str(slot.path),
                    *SAFE_FLAGS, *args], env, cwd=slot.path, check=check, procs=self._procs)

    def _add(self, **delta: float) -> None:
        with self._lock:
            for k, v in delta.items():
                self.stats[k] += v


# ---------------------------------------------------------------- helpers


def fingerprint(gitdir: Path, skip: frozenset[str] = frozenset({"index"})) -> tuple | None:
    """How a git directory looks on disk (each entry's path, mode, size, mtime, inode; links
    never followed), cheap enough for every turn. None if it is not a directory at all (deleted,
    or replaced by a gitfile or a symlink). Directory mtimes are left out: a lock file come and
    gone is no change."""
    if not _is_dir(gitdir):
        return None
    out: list[tuple] = []
    stack = [(gitdir, "")]
    while stack:
        d, rel = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            out.append((rel, "unreadable"))
            continue
        for e in entries:
            r = f"{rel}/{e.name}" if rel else e.name
            if r in skip:
                continue
            st = e.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                out.append((r, st.st_mode))
                stack.append((Path(e.path), r))
            else:
                out.append((r, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino))
    return tuple(sorted(out, key=lambda t: t[0]))


def copy_tree(src: Path, dst: Path, stop: Callable[[], bool] = lambda: False) -> None:
    """Copy a git directory we built (no links in it); packs stay read-only, as git makes them."""
    os.mkdir(dst, 0o755)
    for dirpath, dirnames, filenames in os.walk(src):
        target = dst / os.path.relpath(dirpath, src)
        for d in dirnames:
            os.mkdir(target / d, 0o755)
        for f in filenames:
            if stop():
                raise WorkspaceError("the workspaces are closed")
            copy_file(Path(dirpath, f), target / f,
                      0o444 if dirpath.endswith(os.sep + "pack") else 0o644)


def _lstat(p: Path) -> os.stat_result | None:
    try:
        return os.lstat(p)
    except OSError:
        return None


def _is_dir(p: Path) -> bool:
    st = _lstat(p)
    return st is not None and stat.S_ISDIR(st.st_mode)


def _ident(p: Path) -> tuple | None:
    st = _lstat(p)
    return (st.st_dev, st.st_ino) if st and stat.S_ISDIR(st.st_mode) else None


def _stat_key(p: Path) -> tuple | None:
    st = _lstat(p)
    return st and (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino)


def _no_links_below(top: Path, rel: str) -> Path | None:
    """top/rel, unless a component on the way is not a real directory (a link leads anywhere)."""
    *dirs, last = rel.split("/")
    for part in dirs:
        top = top / part
        if not _is_dir(top):
            return None
    return top / last


def _dirty_gitlink(p: Path) -> bool:
    try:
        return not _is_dir(p) or any(os.scandir(p))
    except OSError:
        return True


def _safe_name(name: str, used: set[str], default: str) -> str:
    """A directory name; unique ignoring case, as the file system may ignore it (macOS)."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._-")[:64] or default
    out, n = base, 1
    while out.casefold() in used:
        n += 1
        out = f"{base}-{n}"
    used.add(out.casefold())
    return out
