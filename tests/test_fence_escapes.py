"""Ways out of the write fence that go through something other than a write to a path: a process
left behind after the turn (which can then race disputatio's own unfenced git in the checkout),
signals to processes outside, shared memory outside, and the turn's own files in the debate
folder reached through /proc/self/fd. Each must be closed, not merely repaired afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from disputatio.adapters import fence
from disputatio.snapshot import open_snapshot
from disputatio.workspace import Workspaces
from support import MARKER_VAR, git, gone, kill_survivors, make_repo, run_cli, write_config
from support.procs import sh

FENCED = True  # tests/conftest.py leaves the fence at its default (auto) for this module
HERE = fence.available()
needs_fence = pytest.mark.skipif(not HERE.on, reason=f"no write fence here: {HERE.reason}")
pytestmark = pytest.mark.process  # agents in the fence, as real processes


@needs_fence
def test_nothing_an_agent_starts_outlives_its_turn(tmp_path, env):
    """A daemon that left the process group (setsid) used to keep running inside the fence,
    with the checkout writable, after the turn had ended."""
    cap = sh(tmp_path, "setsid sleep 60 </dev/null >/dev/null 2>&1 & "
                       "nohup setsid sh -c 'sleep 60' </dev/null >/dev/null 2>&1 & "
                       "sleep 0.2; echo started", env)
    assert cap.read_stdout() == "started\n", cap.read_stderr()
    assert gone(env[MARKER_VAR], within=0.5)  # the kernel ended them with the turn


@needs_fence
def test_a_process_left_behind_cannot_plant_a_filter_for_the_reset(tmp_path):
    """The checkout is writable inside the fence, and disputatio itself runs git there, unfenced,
    to reset it. A process that outlived its turn could rewrite ``.git/config`` right after the
    reset restored it and have ``git status`` run a clean filter of its choosing outside."""
    repo, work, marker = tmp_path / "repo", tmp_path / "work", uuid.uuid4().hex
    make_repo(repo)
    work.mkdir()
    escaped = tmp_path / "escaped-through-git"
    agent = tmp_path / "agent.py"
    agent.write_text(textwrap.dedent(f"""\
        import os, subprocess, sys, time
        from pathlib import Path
        if len(sys.argv) > 1:  # the daemon: for 30 s, plant a filter whenever it is gone
            config = Path(".git/config").read_text()
            evil = '[filter "evil"]\\n\\tclean = sh -c "touch {escaped}; cat"\\n'
            end, planted = time.monotonic() + 30, None
            while time.monotonic() < end:
                try:
                    if os.stat(".git/config").st_ino != planted:  # restored by a reset
                        Path(".git/config.new").write_text(config + evil)
                        os.replace(".git/config.new", ".git/config")
                        planted = os.stat(".git/config").st_ino
                        Path(".gitattributes").write_text("* filter=evil\\n")
                        for f in Path(".").iterdir():
                            if f.is_file():
                                os.utime(f)
                except OSError:
                    pass
                time.sleep(0.0005)
        else:
            subprocess.Popen([sys.executable, __file__, "daemon"], start_new_session=True,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
            print("an answer")
    """))
    cfg = write_config(tmp_path / "d.yaml", [
        {"adapter": "command", "name": "a", "argv": [sys.executable, str(agent)]},
        {"adapter": "simulated", "name": "b", "model": "b"}], rounds=5)
    try:
        r = run_cli("Q?", "--repo", str(repo), "--config", str(cfg), "-q", cwd=work,
                    env={MARKER_VAR: marker})
        assert r.returncode == 0, r.stderr
        assert not escaped.exists()
        assert gone(marker, within=0.5)
    finally:
        kill_survivors(marker)


@needs_fence
def test_an_agent_cannot_signal_or_see_processes_outside(tmp_path, env):
    """Same user, same kernel: without a pid namespace an agent could stop disputatio (the
    debate hangs, no timeout fires), kill the other participants' agents or any of your
    processes."""
    victim = subprocess.Popen(["sleep", "60"])
    try:
        cap = sh(tmp_path, f"kill -STOP {victim.pid} && echo stopped; "
                           f"kill -KILL {victim.pid} && echo killed; "
                           f"test -e /proc/{os.getpid()} && echo sees-disputatio; "
                           f"test -e /proc/{victim.pid} && echo sees-victim; true", env)
        assert cap.read_stdout() == ""
        state = Path(f"/proc/{victim.pid}/stat").read_text().rpartition(")")[2].split()[0]
        assert victim.poll() is None and state != "T"
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()


@needs_fence
def test_an_agent_cannot_reach_shared_memory_outside(tmp_path, env):
    """SysV shared memory is not a path: it needs its own namespace, like /dev/shm has one."""
    made = subprocess.run(["ipcmk", "-M", "4096"], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"ipcmk: {made.stderr.strip()}")
    shm_id = made.stdout.split()[-1]
    try:
        cap = sh(tmp_path, f"ipcrm -m {shm_id} 2>/dev/null && echo removed; true", env)
        assert cap.read_stdout() == ""
        assert subprocess.run(["ipcs", "-m", "-i", shm_id], capture_output=True).returncode == 0
    finally:
        subprocess.run(["ipcrm", "-m", shm_id], capture_output=True)


@needs_fence
def test_the_prompt_record_cannot_be_rewritten_through_proc_self_fd(tmp_path, env):
    """stdin is a file in the debate folder, opened by us outside the fence: reopening
    /proc/self/fd/0 for writing would reach it through our mount, not the agent's."""
    cap = sh(tmp_path, "cat; (echo TAMPERED > /proc/self/fd/0) 2>/dev/null && echo rewrote; "
                       "true", env, stdin=b"the prompt\n")
    assert cap.read_stdout() == "the prompt\n"
    assert (tmp_path / "raw" / "turn.stdin").read_bytes() == b"the prompt\n"


@needs_fence
def test_the_kernels_settings_stay_read_only(tmp_path, env):
    """/proc/sys decides what the kernel runs as root outside every namespace (core_pattern,
    modprobe, hotplug); sysctl writes are checked by uid, and an agent run by root keeps uid 0.
    The value written back is the one already there."""
    cap = sh(tmp_path, 'v=$(cat /proc/sys/kernel/core_pattern) && printf "%s\\n" "$v" '
                       '> /proc/sys/kernel/core_pattern && echo written', env)
    assert cap.read_stdout() == "", cap.read_stderr()
    if os.geteuid() == 0:
        assert "Read-only file system" in cap.read_stderr()


def test_a_repository_planted_in_a_submodule_directory_runs_nothing_at_the_reset(tmp_path):
    """What a fenced agent may write: its checkout, including the empty directory of a
    submodule. Filled with a repository whose own config names a filter, it made the reset's
    ``git status`` (unfenced) run git inside it, and the filter with it."""
    sub = make_repo(tmp_path / "sub", {"lib.py": "x = 1\n"})
    repo = make_repo(tmp_path / "repo")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "lib")
    git(repo, "commit", "-qm", "add submodule")
    ws = Workspaces(open_snapshot(repo), ["a"])
    try:
        planted = ws.path_for("a") / "lib"
        ran = tmp_path / "filter-ran"
        git(planted, "init", "-q")
        git(planted, "config", "filter.evil.clean", f"touch {ran}; cat")
        (planted / ".gitattributes").write_text("* filter=evil\n")
        (planted / "f.txt").write_text("x\n")
        git(planted, "add", "f.txt", ".gitattributes")
        os.utime(planted / "f.txt", (1, 1))  # stale stat data: git would clean it again
        ran.unlink(missing_ok=True)  # our own `git add` above ran it; the reset must not
        assert list(ws.path_for("a").joinpath("lib").iterdir()) == []
        assert not ran.exists()
    finally:
        ws.close()
