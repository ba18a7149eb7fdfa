"""Owns every agent process: start it in its own session, feed stdin from a file, stream its
output to files, and make sure nothing it started outlives the turn.

Output goes straight to files in the debate's ``raw/`` (never through a pipe we must drain), so a
200 MB answer costs no memory and a grandchild holding stdout open cannot wedge the turn.

Every process runs inside the write fence (``fence.py``) when the machine has one: it may write
its ``writable`` paths, its CLI's declared state paths and a private temp dir made for it alone
and removed when it ends.
"""

from __future__ import annotations

import errno
import fcntl
import math
import os
import re
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from disputatio.adapters import fence as fencing
from disputatio.adapters.base import Capture, GiveUp, Invocation
from disputatio.cancel import CancelToken
from disputatio.procs import orphan_guard, process_start
from disputatio.temproots import make_root, remove_tree

TERM_GRACE_S = 2.0
# how often a watched turn's output is read (see GiveUp), and the longest line it matches
WATCH_INTERVAL_S = 0.2
WATCH_LINE_MAX = 64 * 1024
# every agent process (and whatever it starts) carries its owner in its environment, so a run
# killed with -9 can have its orphans found and ended by the next run
OWNER_VAR = "DISPUTATIO_OWNER"

# bwrap reports an agent killed by signal n as exit 128+n, which a CLI can also exit with on
# purpose (gemini exits with the HTTP status mod 256: 401 → 145, 403 → 147, 429 → 173; 130 when
# cancelled). Only the signals that end a process from outside or on a crash are read back as
# signals: 129-143 except 130, which no 4xx or 5xx status maps to.
_FATAL_SIGNALS = frozenset({1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})

_live: dict[int, subprocess.Popen] = {}
_live_lock = threading.Lock()
# the token of callers that bring none (the doctor's canaries); a debate brings its own
_default = CancelToken()
_fence: fencing.Fence | None = None  # None: chosen on first use (``fence.default_mode``)
_fenced: set[int] = set()  # pids of running bwrap processes (see _terminate_group)


def use_fence(fence: fencing.Fence | None) -> None:
    """The fence every later process of this run gets (None: the default mode again)."""
    global _fence
    _fence = fence


def current_fence() -> fencing.Fence:
    global _fence
    if _fence is None:
        # a command has chosen already (preflight.choose_fence); here a DISPUTATIO_FENCE that
        # names no mode raises rather than quietly run agents unfenced
        _fence = fencing.choose(fencing.default_mode())
    return _fence


def run(
    invocation: Invocation,
    cwd: Path,
    timeout_s: float | None,
    raw_dir: Path,
    stem: str,
    base_env: Mapping[str, str] | None = None,
    *,
    writable: Iterable[Path] | None = None,
    state: Iterable[fencing.StateDir] = (),
    protect: Iterable[Path] = (),
    hide: Iterable[Path] = (),
    cancel: CancelToken | None = None,
) -> Capture:
    """Run one invocation to completion, timeout or interruption; never raises for the child.

    The child's environment is ``base_env`` (default: ours) plus the invocation's additions,
    with ``PWD``/``OLDPWD`` pointing at ``cwd``. Under the fence it may write only ``writable``
    (default: ``cwd``; ``[]`` for none), the paths ``state`` declares and its scratch files;
    ``protect`` stays read-only even where a state path would cover it. Cancelling ``cancel``
    (default: the process's own token, see ``interrupt_all``) ends the process tree.
    """
    cancel = cancel or _default
    raw_dir.mkdir(parents=True, exist_ok=True)
    stdout_path = raw_dir / f"{stem}.stdout"
    stderr_path = raw_dir / f"{stem}.stderr"
    scratch = raw_dir / f"{stem}.files"
    argv, env_add = _place_files(invocation, scratch)
    base = os.environ if base_env is None else base_env
    env = {**base, **env_add, "PWD": str(cwd), "OLDPWD": str(cwd), OWNER_VAR: _owner()}

    stdin_path = None
    if invocation.stdin is not None:
        stdin_path = raw_dir / f"{stem}.stdin"
        stdin_path.write_bytes(invocation.stdin)

    if cancel.cancelled:
        return Capture(stdout_path, stderr_path, interrupted=True,
                       context=invocation.context)
    fence = current_fence()
    if missing := _exec_error(argv[0], env, cwd):
        # bwrap or setpriv (see _orphan_guard) would report it as their own failure: say it
        # as the OS would
        return Capture(stdout_path, stderr_path, spawn_error=f"{argv[0]}: {missing}",
                       context=invocation.context)
    private = make_root("fence") if fence.on else None
    try:
        if private is not None:
            (private / "tmp").mkdir(mode=0o700)
            own = [cwd] if writable is None else list(writable)
            argv, env = fencing.wrap(fence, argv, cwd=cwd, env=env, writable=[*own, scratch],
                                     state=fencing.state_paths(state, env),
                                     private_tmp=private / "tmp", protect=protect,
                                     hide=hide)
        bwrap = private is not None and (fence.mechanism or "").startswith("bwrap")
        return _spawn(invocation, argv, env, cwd, stdin_path, timeout_s, stdout_path,
                      stderr_path, bwrap, cancel)
    finally:
        if private is not None:
            remove_tree(private)


def _exec_error(program: str, env: Mapping[str, str], cwd: Path) -> str | None:
    """Why ``program`` cannot be executed (the OS's words), or None. Checked before the spawn
    because bwrap and setpriv start the agent with ``execvp`` and would report a failure as
    their own; a script whose ``#!`` interpreter is missing is checked too, as execve
    reports it (ENOENT)."""
    path = str(cwd / program) if "/" in program and not program.startswith("/") else \
        program if "/" in program else shutil.which(program, path=env.get("PATH"))
    if path is None:
        return os.strerror(errno.ENOENT)
    if not os.path.isfile(path):
        return os.strerror(errno.ENOENT if not os.path.exists(path) else errno.EACCES)
    if not os.access(path, os.X_OK):
        return os.strerror(errno.EACCES)
    try:
        with open(path, "rb") as fh:
            head = fh.read(256)
    except OSError as exc:
        return exc.strerror or os.strerror(errno.EACCES)
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].split()
        interpreter = words[0].decode(errors="replace") if words else ""
        if not interpreter or not os.access(interpreter, os.X_OK):
            return os.strerror(errno.ENOENT)
    return None


def _spawn(invocation: Invocation, argv: list[str], env: dict[str, str], cwd: Path,
           stdin_path: Path | None, timeout_s: float | None, stdout_path: Path,
           stderr_path: Path, bwrap: bool, cancel: CancelToken) -> Capture:
    start = time.monotonic()
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        launch, preexec = orphan_guard(argv, bwrap)
        stdin = (_sealed_copy(stdin_path) if bwrap else open(stdin_path, "rb")) if stdin_path \
            else subprocess.DEVNULL
        try:
            proc = subprocess.Popen(
                launch, cwd=cwd, env=env, stdin=stdin, stdout=out, stderr=err,
                start_new_session=True, preexec_fn=preexec,
            )
        except OSError as exc:
            return Capture(stdout_path, stderr_path, spawn_error=f"{argv[0]}: {exc.strerror}",
                           context=invocation.context)
        finally:
            if not isinstance(stdin, int):   # a file of ours, not subprocess.DEVNULL
                stdin.close()
        # opened before anything else could reap it: a pidfd names this process, never another
        # that reuses its pid after a cancel has reaped it
        exited = _pidfd(proc)
        with _live_lock:
            _live[proc.pid] = proc
            if bwrap:
                _fenced.add(proc.pid)
        timed_out = False
        gave_up = None
        # a cancel that came between the check above and now ends it at once
        forget = cancel.on_cancel(lambda: _end_group(proc))
        try:
            if invocation.give_up is None:
                _wait(proc, exited, timeout_s)
            elif _wait_watching(proc, exited, timeout_s, invocation.give_up,
                                stdout_path if invocation.give_up.stream == "stdout"
                                else stderr_path):
                gave_up = invocation.give_up
                _end_group(proc)
        except subprocess.TimeoutExpired:
            timed_out = True
            _end_group(proc)
        finally:
            forget()
            if exited is not None:
                os.close(exited)
            _reap_group(proc.pid)
            with _live_lock:
                _live.pop(proc.pid, None)
                _fenced.discard(proc.pid)
    duration = time.monotonic() - start
    code = proc.returncode
    if bwrap and code is not None and code - 128 in _FATAL_SIGNALS:
        code = 128 - code  # bwrap reports an agent killed by signal n as exit 128+n
    interrupted = cancel.cancelled and not timed_out
    ended_by_us = timed_out or interrupted or gave_up is not None
    return Capture(
        stdout_path,
        stderr_path,
        exit_code=code if code is not None and code >= 0 else None,
        signal=-code if code is not None and code < 0 and not ended_by_us else None,
        timed_out=timed_out,
        timeout_s=timeout_s,
        interrupted=interrupted,
        duration_s=duration,
        context=invocation.context,
        gave_up=gave_up if not interrupted else None,
    )


def _sealed_copy(path: Path):
    """The file's bytes as a sealed memory file: what a fenced agent reads its prompt from.
    An fd on the file itself would let it reopen ``/proc/self/fd/0`` for writing, through our
    mount, and rewrite the record in the debate folder."""
    fd = os.memfd_create("stdin", os.MFD_ALLOW_SEALING)
    with open(path, "rb") as src, open(fd, "wb", closefd=False) as dst:
        shutil.copyfileobj(src, dst)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW
                | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
    os.lseek(fd, 0, os.SEEK_SET)
    return os.fdopen(fd, "rb")


def _pidfd(proc: subprocess.Popen) -> int | None:
    """A pidfd of the process just started; None where the kernel has none (before 5.3)."""
    try:
        return os.pidfd_open(proc.pid) if hasattr(os, "pidfd_open") else None
    except OSError:
        return None


def _wait(proc: subprocess.Popen, exited: int | None, timeout_s: float | None) -> int:
    """``proc.wait(timeout_s)``, woken by the kernel the moment the process exits (its pidfd
    ``exited`` polls readable). ``Popen.wait`` with a timeout polls in growing sleeps of up to
    50 ms: a delay every short turn would pay, and the benchmark would count as the tool's."""
    if timeout_s is None or exited is None:
        return proc.wait(timeout=timeout_s)
    poller = select.poll()   # not select(): it cannot take a descriptor numbered 1024 or more
    poller.register(exited, select.POLLIN)
    if not poller.poll(max(0, math.ceil(timeout_s * 1000))):
        raise subprocess.TimeoutExpired(proc.args, timeout_s)
    return proc.wait()


def _wait_watching(proc: subprocess.Popen, exited: int | None, timeout_s: float | None,
                   rule: GiveUp, path: Path) -> bool:
    """``proc.wait(timeout_s)`` that also reads the output as it grows: True (the process still
    running) once every line written for ``rule.patience_s`` matched ``rule.pattern``."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    pattern = re.compile(rule.pattern)
    partial, since, long_line = b"", None, False
    with open(path, "rb") as fh:
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if timeout_s is not None and left is not None and left <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout_s)
            try:
                _wait(proc, exited,
                      WATCH_INTERVAL_S if left is None else min(WATCH_INTERVAL_S, left))
                return False
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            while chunk := fh.read(1 << 20):
                *lines, partial = (partial + chunk).split(b"\n")
                for line in lines:
                    if long_line:  # the end of a long line
                        long_line, since = False, None
                    elif line.strip():
                        since = (since or now) if pattern.search(line) else None
                if len(partial) > WATCH_LINE_MAX:  # a long line is an answer, not a retry
                    long_line, partial, since = True, b"", None
            if since is not None and now - since >= rule.patience_s:
                return True


def interrupt_all() -> None:
    """Cancel the process's own token: end every process run without a token of its own
    (Ctrl-C, SIGTERM); later ones do not start. A debate's processes answer to its token."""
    _default.cancel()


def reset_interrupt() -> None:
    """A fresh process token: an interruption of an earlier command in the same process
    (tests, an embedding tool) does not carry over."""
    global _default
    _default = CancelToken()


def live_pids() -> list[int]:
    with _live_lock:
        return list(_live)


def _owner() -> str:
    return f"{os.getpid()}:{process_start(os.getpid())}"


def sweep_orphans() -> list[int]:
    """SIGKILL every process left by an agent of a disputatio run that no longer exists (the
    direct child dies with its parent; a grandchild that outlived a ``kill -9`` does not).
    A live run's agents are never touched. Linux only; elsewhere nothing to find."""
    killed = []
    needle = OWNER_VAR.encode() + b"="
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        for item in environ.split(b"\0"):
            if item.startswith(needle):
                pid_s, _, start = item[len(needle):].decode(errors="replace").partition(":")
                if pid_s.isdigit() and process_start(int(pid_s)) != start:
                    try:
                        os.kill(int(entry.name), signal.SIGKILL)
                        killed.append(int(entry.name))
                    except (ProcessLookupError, PermissionError):
                        pass
                break
    return killed



def _end_group(proc: subprocess.Popen) -> None:
    """SIGTERM the whole process group, then SIGKILL it after a grace period."""
    _terminate_group(proc)
    try:
        proc.wait(timeout=TERM_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(proc.pid, signal.SIGKILL)
    proc.wait()


def _terminate_group(proc: subprocess.Popen) -> None:
    """SIGTERM the group. Under bwrap, everyone in it but bwrap itself: bwrap would die at once
    and take the agent with it (``--die-with-parent``), robbing it of its grace period; it
    exits by itself once the agent has."""
    if proc.pid in _fenced:
        members = [pid for pid in _group_members(proc.pid) if pid != proc.pid]
        for pid in members:
            try:
                os.kill(pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        if members:
            return
    _signal_group(proc.pid, signal.SIGTERM)


def _group_members(pgid: int) -> list[int]:
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()  # after "pid (comm)": state ppid pgrp ...
        if len(fields) > 2 and fields[2] == str(pgid):
            found.append(int(entry.name))
    return found


def _reap_group(pgid: int) -> None:
    """Whatever the agent left running in its group (a daemon, a test server) goes with it."""
    _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _place_files(invocation: Invocation, scratch: Path) -> tuple[list[str], dict[str, str]]:
    if not invocation.files:
        return list(invocation.argv), dict(invocation.env)
    scratch.mkdir(parents=True, exist_ok=True)
    for rel, data in invocation.files.items():
        target = scratch / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    s = str(scratch)
    argv = [a.replace("{scratch}", s) for a in invocation.argv]
    env = {k: v.replace("{scratch}", s) for k, v in invocation.env.items()}
    return argv, env
