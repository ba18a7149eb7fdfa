"""Snapshot the user's repository into a private mirror: read it once, never write it.

After :func:`open_snapshot` returns nothing touches the user's repository again; every checkout is
made from the mirror, a plain ``.git`` directory in a private temp root whose objects are *copied*
(pack files byte for byte, loose objects packed once), so no hardlink, alternates file or remote
leads back. Uncommitted work becomes a commit built *inside the mirror* with a temporary index:
the user's index, stash and object store stay untouched, not even an mtime (git "freshens" an
existing object it is asked to write, so the user's store is never an alternate while we write).

Git runs through gitenv.py; the mirror's root is one of temproots.py's.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from disputatio.gitenv import SAFE_FLAGS, WorkspaceError, git, one_line, own_env, user_env
from disputatio.temproots import make_root, remove_root, remove_tree

# ---------------------------------------------------------------- files


def copy_file(src: Path, dst: Path, mode: int = 0o644) -> None:
    """Copy bytes (in-kernel on Linux) into a path the caller made sure does not exist."""
    shutil.copyfile(src, dst)
    os.chmod(dst, mode)


def make_read_only(tree: Path) -> None:
    """Turn accidental writes into the mirror into errors (a deliberate chmod is detected by
    Workspaces, which fingerprints the mirror)."""
    for dirpath, dirnames, filenames in os.walk(tree, topdown=False):
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o444)
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o555)
    os.chmod(tree, 0o555)


# ---------------------------------------------------------------- the snapshot


@dataclass(eq=False)
class Snapshot:
    """What agents see: ``commit`` on ``branch`` (None: detached HEAD), held in a private mirror
    (``git_dir``) that Workspaces copies. Workspaces.close() closes it; so does exit."""

    repo: Path
    commit: str
    head: str
    branch: str | None
    include_uncommitted: bool
    warnings: list[str]
    git_dir: Path
    root: Path
    gitlinks: tuple[str, ...] = ()
    seconds: float = 0.0
    _finalizer: weakref.finalize | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._finalizer = weakref.finalize(self, remove_root, self.root)

    @property
    def closed(self) -> bool:
        return not (self._finalizer and self._finalizer.alive)

    def close(self) -> None:
        if self._finalizer:
            self._finalizer()


@dataclass
class _Repo:
    cwd: Path  # the working tree's root, or the git dir of a bare repository
    env: dict[str, str]  # user_env(): every git command in the user's repository runs with it
    common: Path
    objects: Path
    bare: bool
    fmt: str
    head: str
    branch: str | None
    warnings: list[str]

    def git(self, args: list[str], check: bool = True) -> subprocess.CompletedProcess:
        return git(SAFE_FLAGS + args, self.env, cwd=self.cwd, check=check)


def open_snapshot(repo: Path, include_uncommitted: bool = False,
                  at: str | None = None) -> Snapshot:
    """Validate ``repo`` and copy what agents should see into a private mirror: HEAD, or with
    ``include_uncommitted`` HEAD plus tracked changes and untracked, non-ignored files, or
    with ``at`` that commit, detached (a review of a head that is not checked out)."""
    t0 = time.monotonic()
    info = _inspect(Path(repo))
    changes: list[str] = []
    elsewhere = False   # ``at`` is not HEAD: the working tree is not what agents see
    if at is not None:
        res = info.git(["rev-parse", "-q", "--verify", "--end-of-options", at + "^{commit}"],
                       check=False)
        if res.returncode != 0:
            raise WorkspaceError(f"{repo}: {at}: no such commit")
        commit = res.stdout.decode().strip()
        if commit != info.head:
            info.head, info.branch, include_uncommitted, elsewhere = commit, None, False, True
    if info.bare and include_uncommitted:
        info.warnings.append("a bare repository has no working tree; agents see HEAD")
    elif not info.bare and not elsewhere:
        changes = _changes(info, "all" if include_uncommitted else "normal")
        if changes and not include_uncommitted:
            info.warnings.append("the working tree has uncommitted changes; agents see HEAD "
                                 "(use --include-uncommitted)")
    root = make_root("snapshot")
    try:
        mirror = root / "mirror.git"
        env = own_env(root) | {"GIT_DIR": str(mirror)}
        _init_mirror(mirror, info, own_env(root))
        _copy_objects(info.objects, mirror, env)
        commit = info.head
        if include_uncommitted and changes:
            commit = _commit_changes(info, changes, root, env)
        _write_refs(mirror, info, commit)
        gitlinks = _gitlinks(commit, env)
        if gitlinks:
            info.warnings.append("the repository has submodules; agents see their directories "
                                 "empty")
        make_read_only(mirror)
    except BaseException:
        remove_tree(root)
        raise
    return Snapshot(info.cwd, commit, info.head, info.branch, include_uncommitted, info.warnings,
                    mirror, root, gitlinks, time.monotonic() - t0)


def _inspect(given: Path) -> _Repo:
    path = given.expanduser()
    if not path.exists():
        raise WorkspaceError(f"{given}: path does not exist")
    if not path.is_dir():
        raise WorkspaceError(f"{given}: not a directory")
    path = path.resolve()
    try:
        env = user_env(path)
    except WorkspaceError as exc:
        raise WorkspaceError(f"{given}: {exc}") from None
    res = git(SAFE_FLAGS + ["rev-parse", "--path-format=absolute", "--git-common-dir",
                            "--git-path", "objects", "--is-bare-repository",
                            "--is-inside-git-dir", "--show-object-format",
                            "--is-shallow-repository"], env, cwd=path, check=False)
    if res.returncode != 0:
        if b"not a git repository" in res.stderr:
            raise WorkspaceError(f"{given}: not a git repository")
        raise WorkspaceError(f"{given}: {one_line(res.stderr)}")
    common, objects, bare, inside, fmt, shallow = res.stdout.decode().splitlines()[:6]
    warnings = []
    if bare == "true":
        cwd = Path(common)
    elif inside == "true":
        raise WorkspaceError(f"{given}: is inside a .git directory; pass the working tree")
    else:
        cwd = Path(git(SAFE_FLAGS + ["rev-parse", "--show-toplevel"], env, cwd=path)
                   .stdout.decode().strip())
        if cwd != path:
            warnings.append(f"{given} is inside the repository {cwd}; agents see all of it")
    info = _Repo(cwd, env, Path(common), Path(objects), bare == "true", fmt, "", None, warnings)
    head = info.git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], check=False)
    if head.returncode != 0:
        raise WorkspaceError(f"{given}: repository has no commits")
    info.head = head.stdout.decode().strip()
    ref = info.git(["symbolic-ref", "-q", "HEAD"], check=False).stdout.decode().strip()
    info.branch = ref if ref.startswith("refs/heads/") else None
    if shallow == "true":
        warnings.append("the repository is a shallow clone; agents see its truncated history")
    return info


def _changes(info: _Repo, untracked: str) -> list[str]:
    """Paths that differ from HEAD, read-only (GIT_OPTIONAL_LOCKS=0: status does not even
    refresh the user's index); submodule pointers stay as in HEAD. With filters off, a file
    whose stat data is stale is compared by its raw bytes: a smudged LFS file shows here as
    changed, where the user's own git, running git-lfs, would call it clean."""
    res = info.git(["status", "--porcelain=v1", "-z", f"--untracked-files={untracked}",
                    "--no-renames", "--ignore-submodules=all"])
    return [os.fsdecode(e[3:]) for e in res.stdout.split(b"\0") if len(e) > 3]


def _init_mirror(mirror: Path, info: _Repo, env: dict[str, str]) -> None:
    """An empty git dir (no template, so no sample hooks) with core.bare=false: a byte copy of it
    is a ready ``.git`` for a checkout."""
    fmt = [f"--object-format={info.fmt}"] if info.fmt != "sha1" else []
    git(SAFE_FLAGS + ["init", "-q", "--bare", "--template=", *fmt, str(mirror)], env)
    cfg = mirror / "config"
    text = cfg.read_text().replace("bare = true", "bare = false\n\tlogallrefupdates = true")
    cfg.write_text(text + "[gc]\n\tauto = 0\n")
    if (info.common / "shallow").is_file():
        copy_file(info.common / "shallow", mirror / "shallow")


def _copy_objects(objects: Path, mirror: Path, env: dict[str, str]) -> None:
    """Pack files are copied as they are (no delta search, and no hardlink an agent could write
    through); loose objects are packed once, so a checkout copies a few files, not thousands."""
    dirs, queue = [], [objects]
    while queue:  # the object dir and, recursively, its alternates: we copy theirs too
        d = queue.pop(0)
        if d not in dirs and d.is_dir():
            dirs.append(d)
            alt = d / "info" / "alternates"
            lines = alt.read_text().splitlines() if alt.is_file() else []
            queue += [Path(os.path.normpath(d / ln.strip().strip('"'))) for ln in lines
                      if ln.strip() and not ln.startswith("#")]
    pack_dir = mirror / "objects" / "pack"
    for _ in range(3):
        try:
            loose = _copy_packs(dirs, pack_dir)
            break
        except FileNotFoundError:  # the user's git gc replaced a pack under us: start over
            for f in os.listdir(pack_dir):
                os.unlink(pack_dir / f)
    else:
        raise WorkspaceError("the repository's objects kept changing while being copied (a git "
                             "gc?); try again")
    if loose:  # read through alternates (never written: pack-objects only reads them)
        alternates = ":".join('"' + str(d).replace("\\", "\\\\").replace('"', '\\"') + '"'
                              if ":" in str(d) else str(d) for d in dirs)
        git(SAFE_FLAGS + ["pack-objects", "-q", "--window=0", str(pack_dir / "pack")],
            env | {"GIT_ALTERNATE_OBJECT_DIRECTORIES": alternates},
            input="\n".join(loose).encode() + b"\n")


def _copy_packs(dirs: list[Path], pack_dir: Path) -> list[str]:
    loose: list[str] = []
    hexdigits = set("0123456789abcdef")
    for d in dirs:
        names = set(os.listdir(d / "pack")) if (d / "pack").is_dir() else set()
        for name in sorted(names):
            base = name[:-5]
            if name.startswith("pack-") and name.endswith(".pack") and base + ".idx" in names:
                for ext in (".pack", ".idx"):
                    if not (pack_dir / (base + ext)).exists():
                        copy_file(d / "pack" / (base + ext), pack_dir / (base + ext), 0o444)
        for sub in os.scandir(d):
            if len(sub.name) == 2 and set(sub.name) <= hexdigits and sub.is_dir():
                loose += [sub.name + f.name for f in os.scandir(sub.path)
                          if len(f.name) >= 38 and set(f.name) <= hexdigits]
    return loose


def _commit_changes(info: _Repo, changes: list[str], root: Path, env: dict[str, str]) -> str:
    """HEAD plus the working tree's changes, as one commit in the mirror (temporary index).
    Bytes are hashed raw (--no-filters): no clean filter of the user's runs."""
    env = env | {"GIT_INDEX_FILE": str(root / "uncommitted.index")}
    git(SAFE_FLAGS + ["read-tree", info.head], env)
    cfg = info.git(["config", "--type=bool", "core.fileMode"], check=False)
    prior: dict[str, str] | None = None  # without core.fileMode the exec bit lies: HEAD's modes
    if cfg.stdout.strip() == b"false":
        prior = {}
        for e in filter(None, git(["ls-files", "-s", "-z"], env).stdout.split(b"\0")):
            meta, path = e.split(b"\t", 1)
            prior[os.fsdecode(path)] = meta.split()[0].decode()
    (root / "links").mkdir()
    removals: list[str] = []
    adds: list[tuple[str, str]] = []
    sources: list[Path] = []
    for rel in changes:
        if rel.endswith("/"):  # an untracked nested repository: not ours to copy
            continue
        p = info.cwd / rel
        try:
            st = os.lstat(p)
        except (FileNotFoundError, NotADirectoryError):
            st = None
        if st and stat.S_ISLNK(st.st_mode):
            src = root / "links" / str(len(sources))  # hash the link's target as a blob
            src.write_bytes(os.readlink(os.fsencode(p)))
            mode = "120000"
        elif st and stat.S_ISREG(st.st_mode):
            src, mode = p, prior.get(rel, "100644") if prior is not None else \
                ("100755" if st.st_mode & 0o100 else "100644")
        else:  # gone, or a directory (or fifo) where a file was
            removals.append(rel)
            continue
        adds.append((mode, rel))
        sources.append(src)
    shas = _hash_files(sources, env)
    lines = [f"0 {'0' * len(info.head)}\t".encode() + os.fsencode(r) for r in removals]
    lines += [f"{m} {s}\t".encode() + os.fsencode(r) for (m, r), s in zip(adds, shas, strict=True)]
    git(SAFE_FLAGS + ["update-index", "-z", "--index-info"], env, input=b"\0".join(lines) + b"\0")
    tree = git(SAFE_FLAGS + ["write-tree"], env).stdout.decode().strip()
    os.unlink(root / "uncommitted.index")
    remove_tree(root / "links")
    if tree == git(["rev-parse", info.head + "^{tree}"], env).stdout.decode().strip():
        return info.head
    who = {f"GIT_{r}_{k}": v for r in ("AUTHOR", "COMMITTER")
           for k, v in (("NAME", "disputatio"), ("EMAIL", "disputatio@localhost"))}
    msg = (f"disputatio: uncommitted changes ({len(adds)} added or modified, {len(removals)} "
           f"deleted)\n\nThe working tree when the debate started, on top of {info.head[:12]}."
           "\nThis commit exists only in the agents' copies.\n")
    res = git(SAFE_FLAGS + ["commit-tree", tree, "-p", info.head, "-F", "-"], env | who,
              input=msg.encode())
    return res.stdout.decode().strip()


def _hash_files(paths: list[Path], env: dict[str, str]) -> list[str]:
    if any(b"\n" in os.fsencode(p) for p in paths):  # --stdin-paths is newline-separated
        return [git(["hash-object", "-w", "--no-filters", "--", str(p)], env).stdout.decode()
                .strip() for p in paths]
    res = git(["hash-object", "-w", "--no-filters", "--stdin-paths"], env,
              input=b"".join(os.fsencode(p) + b"\n" for p in paths))
    return res.stdout.decode().split()


def _write_refs(mirror: Path, info: _Repo, commit: str) -> None:
    """Copy the values (not the storage) of branches, tags and remote-tracking refs, so agents
    can run ``git diff main...HEAD``; no remote is configured, so nothing can be pushed."""
    res = info.git(["for-each-ref", "--format=%(objectname) %(refname) %(symref)",
                    "refs/heads", "refs/tags", "refs/remotes"])
    refs = {}
    for line in res.stdout.splitlines():
        sha, name, sym = (line.split(b" ", 2) + [b""])[:3]
        if not sym:
            refs[name] = sha
    if info.branch:
        refs[info.branch.encode()] = commit.encode()
    (mirror / "packed-refs").write_bytes(b"".join(s + b" " + n + b"\n"
                                                  for n, s in sorted(refs.items())))
    (mirror / "HEAD").write_text(f"ref: {info.branch}\n" if info.branch else f"{commit}\n")


def _gitlinks(commit: str, env: dict[str, str]) -> tuple[str, ...]:
    """Submodule paths: empty directories in a checkout, where an agent's files would hide from
    git status and git clean."""
    if git(["cat-file", "-e", f"{commit}:.gitmodules"], env, check=False).returncode != 0:
        return ()
    out = git(["ls-tree", "-r", "-z", "--full-tree", commit], env).stdout
    return tuple(os.fsdecode(e.split(b"\t", 1)[1]) for e in out.split(b"\0")
                 if e.startswith(b"160000 "))
