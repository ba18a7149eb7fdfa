"""The write fence: an agent and everything it runs may write only to its own checkout, a private
temporary directory and the state directories its CLI needs; the rest of the filesystem is
read-only. The kernel enforces it (a bubblewrap mount namespace on Linux, a Seatbelt profile on
macOS), so no CLI flag, allow-list gap or tool escape can widen it.

This module holds the policy (which paths, in which order, with which flags), builds the command
line and probes once whether the machine can fence at all. The transport applies it to every
process it starts and removes the private directory after.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

MODES = ("auto", "require", "off")
# the mode when neither a flag nor a config file says (CI, tests, a machine-wide choice)
MODE_VAR = "DISPUTATIO_FENCE"
PROBE_TIMEOUT_S = 10.0
# inside the fence /tmp is the turn's private directory: test suites that write to /tmp or to
# $TMPDIR keep working, and nothing they leave there reaches the real /tmp
INNER_TMP = "/tmp"
_TMP_VARS = ("TMPDIR", "TMP", "TEMP")


class FenceUnavailable(Exception):
    """``fence: require`` and no fence can be had; the message is one line for the user."""


@dataclass(frozen=True)
class StateDir:
    """Where a CLI must write to stay logged in and work: the directory named by ``var`` when the
    agent's environment sets it, else each of ``defaults`` (``~`` is the agent's ``HOME``)."""

    var: str | None
    defaults: tuple[str, ...] = ()
    # the variable names a directory that holds the state one level down (GEMINI_CLI_HOME/.gemini)
    subdir: str = ""


@dataclass(frozen=True)
class Fence:
    """How this run fences its agents: a mechanism (``bwrap 0.8.0``), or none and why."""

    mechanism: str | None
    reason: str = ""
    tool: str | None = None   # the bwrap or sandbox-exec binary

    @property
    def on(self) -> bool:
        return self.mechanism is not None

    def record(self) -> dict[str, str]:
        """What the ledger, debate.md and debate.json say about it."""
        if self.mechanism is not None:
            return {"fence": self.mechanism}
        return {"fence": "none", "fence_reason": self.reason}


OFF = Fence(None, "turned off (--fence off, or fence: off in the config)")


def choose(mode: str = "auto") -> Fence:
    """The fence for a run: ``off`` never fences, ``auto`` fences when it can, ``require``
    raises ``FenceUnavailable`` when it cannot."""
    if mode not in MODES:
        raise ValueError(f"fence must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "off":
        return OFF
    fence = available()
    if mode == "require" and not fence.on:
        raise FenceUnavailable(f"the write fence is required but unavailable: {fence.reason}")
    return fence


def default_mode(environ: Mapping[str, str] = os.environ) -> str:
    """``$DISPUTATIO_FENCE`` (in any case), else ``auto``. A value that names no mode is a
    ValueError, never a quiet ``auto``: a misspelt ``require`` would run agents unfenced."""
    raw = environ.get(MODE_VAR, "").strip()
    if not raw:
        return "auto"
    if raw.lower() not in MODES:
        raise ValueError(f"{MODE_VAR}={raw[:40]!r} is not a fence mode (auto, require or off)")
    return raw.lower()


def available() -> Fence:
    """The fence this machine can give, probed once per process and per PATH: the exact flags an
    agent gets, around a harmless command. A refused user namespace or a missing binary shows
    here."""
    return _probe(sys.platform, shutil.which("bwrap"), shutil.which("sandbox-exec"))


@functools.lru_cache(maxsize=8)
def _probe(platform: str, bwrap: str | None, sandbox_exec: str | None) -> Fence:
    if platform.startswith("linux"):
        if not bwrap:
            return Fence(None, "bwrap (bubblewrap) is not on PATH; install the bubblewrap package")
        probe_tmp = Path(os.path.realpath(os.environ.get("TMPDIR") or "/tmp"))
        # inside, bwrap itself: the one program sure to be there whatever PATH holds
        argv = bwrap_argv(bwrap, [bwrap, "--version"], cwd=Path("/"), private_tmp=probe_tmp)
        version = _run_quiet([bwrap, "--version"])
        ok, err = _works(argv)
        if not ok:
            return Fence(None, f"bwrap cannot make a sandbox here: {err}")
        m = re.search(r"\d+(\.\d+)+", version[1])
        return Fence(f"bwrap {m.group(0) if m else '(unknown version)'}", tool=bwrap)
    if platform == "darwin":
        if not sandbox_exec:
            return Fence(None, "sandbox-exec is not available on this macOS")
        ok, err = _works([sandbox_exec, "-p", sbpl_profile([]), "/usr/bin/true"])
        if not ok:
            return Fence(None, f"sandbox-exec refused a profile: {err}")
        return Fence("sandbox-exec", tool=sandbox_exec)
    return Fence(None, f"no write fence for platform {platform}")


def _works(argv: list[str]) -> tuple[bool, str]:
    code, out = _run_quiet(argv)
    return code == 0, " ".join(out.split())[:200] or f"exit {code}"


def _run_quiet(argv: list[str]) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return -1, str(exc)
    return p.returncode, (p.stderr or p.stdout or "").strip()


def wrap(fence: Fence, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
         writable: Iterable[Path], state: Iterable[Path], private_tmp: Path,
         protect: Iterable[Path] = (), hide: Iterable[Path] = ()
         ) -> tuple[list[str], dict[str, str]]:
    """``argv`` and ``env`` fenced. Writable: ``writable`` (the checkout, scratch files),
    ``state`` (the CLI's state paths; missing ones are created first) and ``private_tmp``;
    ``protect`` (the user's repository, the debate folder, the other checkouts) stays read-only
    even where a state path would cover it; ``hide`` (files with every participant's env values:
    the debate's lineup.json, the user config) read as empty. Without a fence both come back
    unchanged."""
    if not fence.on:
        return list(argv), dict(env)
    assert fence.tool is not None, "a fence that is on names its binary"
    own = [Path(os.path.realpath(p)) for p in writable if os.path.exists(p)]
    states = prepare(state)
    guard = covering(states, protect)
    if fence.mechanism == "sandbox-exec":
        tmp_vars = [v for v in _TMP_VARS if v in env] + ["TMPDIR"]
        inner = {**env, **dict.fromkeys(tmp_vars, str(private_tmp))}
        return sandbox_exec_argv(fence.tool, argv, [*states, *own, private_tmp], guard), inner
    path_dirs = env.get("PATH", "").split(os.pathsep)
    # the executable, scripts and files named by absolute path (``python3 /tmp/x/fake.py``)
    named = [os.path.dirname(a) if os.path.isfile(a) else a for a in argv if a.startswith("/")]
    # a program under /tmp brings its installation along (a venv's lib/, the source of an
    # editable install, which is how a simulated agent imports disputatio from a clone in /tmp)
    homes = tmp_homes([*named, *sys.path], Path(INNER_TMP))
    readable = tmp_reachable([*named, *path_dirs, str(cwd), *homes], Path(INNER_TMP))
    out = bwrap_argv(fence.tool, argv, cwd=cwd, private_tmp=private_tmp, readable=readable,
                     state=states, protect=guard, writable=own,
                     hidden=[p for p in hide if os.path.isfile(p)])
    return out, inner_env(env)


# ---------------------------------------------------------------- what may be written


def state_paths(declared: Iterable[StateDir], env: Mapping[str, str]) -> list[Path]:
    """The state paths a CLI declared, resolved against the agent's environment."""
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    out: list[Path] = []
    for d in declared:
        value = env.get(d.var) if d.var else None
        if value:
            out.append(Path(value).expanduser() / d.subdir if d.subdir else Path(value))
        else:
            out += [home / p[2:] if p.startswith("~/") else Path(p) for p in d.defaults]
    return [Path(os.path.abspath(p)) for p in out]


def prepare(paths: Iterable[Path]) -> list[Path]:
    """Create what does not exist yet (a fresh machine has no ``~/.codex``), so it can be bound.
    A path whose name looks like a file (``.claude.json``) is left alone when absent: an empty
    file would not be valid state (such a CLI is best given its own config directory, e.g.
    ``CLAUDE_CONFIG_DIR``, which then holds the file)."""
    ready = []
    for p in paths:
        if not os.path.lexists(p):
            if p.suffix in (".json", ".toml", ".yaml", ".db"):
                continue
            try:
                p.mkdir(parents=True, exist_ok=True)
            except OSError:
                continue
        ready.append(Path(os.path.realpath(p)))
    return ready


def covering(grants: Iterable[Path], protected: Iterable[Path]) -> list[Path]:
    """The protected paths (the user's repository, the debate folder, the other checkouts) that
    lie inside a writable grant: they are bound read-only again on top of it."""
    grants = [Path(os.path.realpath(g)) for g in grants]
    out = []
    for p in protected:
        real = Path(os.path.realpath(p))
        if any(real == g or g in real.parents for g in grants) and os.path.lexists(real):
            out.append(real)
    return out


# ---------------------------------------------------------------- Linux: bubblewrap


def bwrap_argv(bwrap: str, argv: Sequence[str], *, cwd: Path, private_tmp: Path,
               readable: Sequence[Path] = (), state: Sequence[Path] = (),
               protect: Sequence[Path] = (), writable: Sequence[Path] = (),
               uid: int | None = None, hidden: Sequence[Path] = ()) -> list[str]:
    """The bwrap command line around ``argv``. Mount order matters (a later bind covers an
    earlier one): everything read-only, the private /tmp, what must stay readable under it
    (binaries on PATH that live in the real temp dir), the state dirs writable, protected paths
    read-only again where a state dir covered them, then the checkout and scratch writable.

    A user namespace without capabilities makes every mount locked: the agent cannot remount,
    unmount or bind its way out, even when disputatio runs as root. Only CAP_SETFCAP is kept for
    root, so a CLI's own bubblewrap (codex) can still map uid 0 in a nested user namespace.

    A pid namespace, because a process is a way out too: one that outlived its turn could keep
    writing the checkout while disputatio's own git resets it (a filter planted in
    ``.git/config`` runs unfenced), and the agent could signal any process of the same user
    (stop disputatio, kill the other agents). In its own pid namespace it sees and signals only
    its own tree, and the kernel ends everything in it when the agent exits. SysV IPC gets its
    own namespace for the same reason /dev/shm is private. The network, the process group and
    the session stay ours: killing the group kills the agent."""
    uid = os.geteuid() if uid is None else uid
    out = [bwrap, "--die-with-parent", "--unshare-user", "--unshare-pid", "--unshare-ipc"]
    if uid == 0:
        out += ["--cap-drop", "ALL", "--cap-add", "CAP_SETFCAP"]
    out += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for entry in _PROC_KERNEL:
        out += ["--ro-bind-try", entry, entry]
    out += ["--bind", str(private_tmp), INNER_TMP]
    for flag, paths in (("--ro-bind", readable), ("--bind", state), ("--ro-bind", protect),
                        ("--bind", writable)):
        for p in paths:
            out += [flag, str(p), str(p)]
    for p in hidden:   # files that hold other participants' secrets read as empty
        out += ["--ro-bind", "/dev/null", str(p)]
    out += ["--chdir", str(cwd), "--", *argv]
    return out


# The kernel's settings in the new /proc. bwrap means to cover them read-only itself but skips
# any it finds not writable by access(2), which on some kernels is /proc/sys: then an agent whose
# uid is 0 (the sysctl check is by uid, not capability) could set kernel.core_pattern to a
# program the kernel runs as root, outside every namespace, on the next crash.
_PROC_KERNEL = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus")


def tmp_reachable(paths: Iterable[str | Path], tmp: Path) -> list[Path]:
    """Existing directories under /tmp that the agent must still reach read-only once /tmp is
    its private one: where its executable and the scripts it is given live, PATH entries (test
    fakes, tools unpacked to a temp dir). Taken as named (bwrap follows a symlink in the
    source); nested ones are covered by their parent."""
    found: list[Path] = []
    for raw in paths:
        if not raw:
            continue
        p = Path(os.path.abspath(raw))
        if tmp in p.parents and p.is_dir():
            found.append(p)
    found.sort(key=lambda p: len(p.parts))
    kept: list[Path] = []
    for p in found:
        if not any(k == p or k in p.parents for k in kept):
            kept.append(p)
    return kept


def tmp_homes(paths: Iterable[str | Path], tmp: Path) -> list[str]:
    """For each path under /tmp, the directory directly under /tmp that holds it: the
    installation a program or a module there comes from, readable as a whole."""
    out: list[str] = []
    for raw in paths:
        if not raw:
            continue
        p = Path(os.path.abspath(raw))
        if tmp in p.parents:
            top = tmp / p.relative_to(tmp).parts[0]
            if str(top) not in out:
                out.append(str(top))
    return out


def inner_env(env: Mapping[str, str]) -> dict[str, str]:
    """The agent's environment inside the fence: its temp dir is the private /tmp."""
    out = dict(env)
    out["TMPDIR"] = INNER_TMP
    for var in _TMP_VARS[1:]:
        if var in out:
            out[var] = INNER_TMP
    return out


# ---------------------------------------------------------------- macOS: sandbox-exec


def sbpl_profile(writable: Sequence[Path], protect: Sequence[Path] = ()) -> str:
    """A Seatbelt profile with the same shape: allow everything, deny every file write except
    the given subpaths (and /dev/null, /dev/tty-like devices a CLI writes to); ``protect`` is
    denied again inside them (the last matching rule wins)."""
    def paths(ps: Sequence[Path]) -> str:
        return "".join(f' (subpath "{_sbpl_quote(os.path.realpath(p))}")' for p in ps)

    profile = ("(version 1)\n(allow default)\n(deny file-write*)\n"
               '(allow file-write* (literal "/dev/null") (literal "/dev/dtracehelper")'
               f' (regex #"^/dev/tty") (regex #"^/dev/fd/"){paths(writable)})\n')
    return profile + (f"(deny file-write*{paths(protect)})\n" if protect else "")


def _sbpl_quote(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def sandbox_exec_argv(tool: str, argv: Sequence[str], writable: Sequence[Path],
                      protect: Sequence[Path] = ()) -> list[str]:
    return [tool, "-p", sbpl_profile(writable, protect), *argv]
