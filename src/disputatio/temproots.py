"""Our private temp roots: each a ``disputatio-*`` directory (0700) with an owner marker, made
for a snapshot, a debate's workspaces or a fenced process's ``/tmp``, removed with the marker
last, and swept by the next run once their owner is dead (kill -9, power loss), never while it
lives: the marker (``owner.json``) holds the owner's pid, its start time and the boot id.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

from disputatio.procs import process_start

ROOT_PREFIX = "disputatio-"
OWNER_FILE = "owner.json"
MARKERLESS_GRACE_S = 3600.0  # a root without its marker yet may be being born in another run


def make_root(kind: str) -> Path:
    """A private (0700) temp dir with an owner marker, so sweep_leftovers can tell a dead run's
    leftovers from the root of a live concurrent run."""
    root = Path(tempfile.mkdtemp(prefix=ROOT_PREFIX))
    marker = {"pid": os.getpid(), "start": process_start(os.getpid()), "boot": boot_id(),
              "kind": kind}
    (root / OWNER_FILE).write_text(json.dumps(marker))
    return root


def boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def remove_tree(path: Path) -> None:
    """Remove a file, link or tree without following links; an agent may have left read-only or
    unreadable directories behind, so on failure make ours writable and retry."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return
        shutil.rmtree(path)
        return
    except FileNotFoundError:
        return
    except OSError:
        pass
    try:  # another sweeper may be removing the same tree: vanishing entries are fine
        os.chmod(path, stat.S_IRWXU)
    except OSError:
        return
    for dirpath, dirnames, _ in os.walk(path):
        for d in dirnames:
            p = os.path.join(dirpath, d)
            if not os.path.islink(p):  # chmod follows links: never touch what a link names
                try:
                    os.chmod(p, stat.S_IRWXU)
                except OSError:
                    pass
    shutil.rmtree(path, ignore_errors=True)


def remove_root(root: Path) -> None:
    """Remove one of our temp roots with its owner marker last: cut short (a second Ctrl-C, a
    kill -9), what remains still says whose it is, so the next run's sweep can take it."""
    try:
        children = [c for c in root.iterdir() if c.name != OWNER_FILE]
    except OSError:
        children = []
    for child in children:
        remove_tree(child)
    remove_tree(root)


def sweep_leftovers() -> list[Path]:
    """Remove temp roots whose owner died (kill -9, power loss). A root whose owner is alive
    (same pid *and* same process start time) is never touched, so concurrent runs are safe."""
    removed = []
    try:
        entries = [e for e in os.scandir(tempfile.gettempdir()) if e.name.startswith(ROOT_PREFIX)]
    except OSError:
        return []
    for entry in entries:
        path = Path(entry.path)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not _alive(path, st):
            remove_tree(path)
            if not os.path.lexists(path):
                removed.append(path)
    return removed


def _alive(root: Path, st: os.stat_result) -> bool:
    try:
        marker = json.loads((root / OWNER_FILE).read_text())
        pid, start = int(marker["pid"]), marker.get("start")
    except (OSError, ValueError, KeyError, TypeError):
        return time.time() - st.st_mtime < MARKERLESS_GRACE_S
    if marker.get("boot") and boot_id() and marker["boot"] != boot_id():
        return False
    now = process_start(pid)
    return now is not None and (start is None or now == "?" or now == start)

