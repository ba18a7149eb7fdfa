"""The transport with real processes: fake CLIs that answer, dawdle, hang with a grandchild on
the pipe, print garbage or 50 MB, read a 1 MB prompt, or do not exist."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from disputatio import adapters, procs
from disputatio.adapters import transport
from disputatio.adapters.base import NOT_INSTALLED, UNPARSEABLE, Invocation, TurnRequest
from disputatio.engine import resolve_bin
from support import AGENT, FAKES, MARKER_VAR, alive, gone, marked_processes, wait_for


def run(tmp_path: Path, argv, env, timeout=30.0, stdin: bytes | None = None, **extra):
    inv = Invocation(argv=tuple(argv), env={k: str(v) for k, v in extra.items()}, stdin=stdin)
    return transport.run(inv, tmp_path, timeout, tmp_path / "raw", "turn", env)


def marker_of(env) -> str:
    return env[MARKER_VAR]


def test_success(tmp_path, env):
    cap = run(tmp_path, AGENT, env)
    assert cap.exit_code == 0 and not cap.timed_out and cap.spawn_error is None
    assert cap.read_stdout().startswith("fake agent answered in ")
    assert cap.stdout_path == tmp_path / "raw" / "turn.stdout"


def test_slow_answer_within_the_timeout(tmp_path, env):
    flag = tmp_path / "go"
    timer = threading.Timer(0.5, flag.touch)
    timer.start()
    cap = run(tmp_path, AGENT, env, timeout=20, FAKE_HANG_UNTIL=flag)
    timer.join()
    assert cap.exit_code == 0 and not cap.timed_out
    assert 0.5 <= cap.duration_s < 20
    assert "fake agent answered" in cap.read_stdout()


@pytest.mark.process
@pytest.mark.parametrize("child_ignores_term", [False, True], ids=["term-ok", "term-ignored"])
def test_hang_with_grandchild_on_the_pipe_ends_at_timeout_plus_grace(tmp_path, env, monkeypatch,
                                                                     child_ignores_term):
    monkeypatch.setattr(transport, "TERM_GRACE_S", 0.5)
    timeout = 1.0  # ample for the tree to start; checked below, so never vacuous
    knobs = {"FAKE_TREE": 1, "FAKE_HANG": 1, "FAKE_PID_DIR": tmp_path}
    if child_ignores_term:
        knobs["FAKE_IGNORE_TERM"] = 1
    started = time.monotonic()
    cap = run(tmp_path, AGENT, env, timeout=timeout, **knobs)
    elapsed = time.monotonic() - started
    assert cap.timed_out and cap.exit_code is None and cap.signal is None
    # the grandchild ignores SIGTERM and holds stdout: it must not stretch the turn; only a
    # child that ignores SIGTERM costs the grace period
    limit = timeout + (transport.TERM_GRACE_S if child_ignores_term else 0) + 1.5
    assert timeout <= elapsed < limit
    assert {p.name.split("-")[0] for p in tmp_path.iterdir() if "-" in p.name} == \
        {"child", "grandchild"}
    assert gone(marker_of(env))


def test_garbage_output_is_unparseable_through_an_adapter(tmp_path, env):
    claude = adapters.get("claude")
    inv = claude.build(TurnRequest(prompt="hello", bin=str(FAKES / "garbage.sh")))
    cap = transport.run(inv, tmp_path, 30, tmp_path / "raw", "turn", env)
    assert cap.exit_code == 0
    result = claude.parse(cap)
    assert not result.ok and result.failure == UNPARSEABLE
    assert "Segmentation fault" in result.message


def _vm_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)


def test_huge_output_streams_to_the_file_not_to_memory(tmp_path, env):
    mib = 50
    try:  # reset the peak RSS so it measures this test, not earlier ones
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    before = max(_vm_kb("VmRSS"), _vm_kb("VmHWM"))
    cap = run(tmp_path, [sys.executable, str(FAKES / "flood.py"), str(mib)], env)
    grown_kb = _vm_kb("VmHWM") - before
    assert cap.exit_code == 0, cap.read_stderr()
    assert cap.stdout_path.stat().st_size == mib * 1024 * 1024
    digest = hashlib.sha256()
    with open(cap.stdout_path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    assert digest.hexdigest() == cap.read_stderr().strip()
    assert grown_kb < 8 * 1024, f"the parent's peak RSS grew by {grown_kb} kB"


def test_a_1mb_prompt_arrives_whole_on_stdin(tmp_path, env):
    prompt = ("Déjà vu ✓ " * 110_000).encode()[:1_000_000]
    cap = run(tmp_path, [sys.executable, str(FAKES / "stdin_probe.py")], env, stdin=prompt)
    assert cap.exit_code == 0, cap.read_stderr()
    where, counted = cap.read_stdout().splitlines()
    assert where == str(tmp_path / "raw" / "turn.stdin")
    assert counted.split() == [str(len(prompt)), hashlib.sha256(prompt).hexdigest()]


def test_stdin_is_dev_null_without_a_prompt(tmp_path, env):
    """Our own stdin is an open pipe nobody writes to: a child inheriting it would block."""
    read_end, write_end = os.pipe()
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        cap = run(tmp_path, [sys.executable, str(FAKES / "stdin_probe.py")], env, timeout=10)
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)
    assert not cap.timed_out and cap.exit_code == 0, cap.read_stderr()
    assert cap.read_stdout().split() == ["/dev/null", "0", hashlib.sha256(b"").hexdigest()]
    assert not (tmp_path / "raw" / "turn.stdin").exists()


@pytest.mark.process
def test_interrupt_all_ends_a_running_tree_and_later_turns_do_not_start(tmp_path, env):
    pids = tmp_path / "pids"
    pids.mkdir()
    box = {}
    worker = threading.Thread(target=lambda: box.update(cap=run(
        tmp_path, AGENT, env, timeout=60, FAKE_TREE=1, FAKE_HANG=1, FAKE_PID_DIR=pids)))
    worker.start()
    wait_for(lambda: len(list(pids.iterdir())) == 2, 15, "child and grandchild running")
    assert len(marked_processes(marker_of(env))) == 2
    transport.interrupt_all()
    worker.join(timeout=transport.TERM_GRACE_S + 5)
    assert not worker.is_alive()
    assert box["cap"].interrupted and not box["cap"].timed_out
    assert gone(marker_of(env))
    assert transport.live_pids() == []
    later = run(tmp_path, AGENT, env, FAKE_PID_DIR=pids)
    assert later.interrupted and len(list(pids.iterdir())) == 2  # nothing new was started


@pytest.mark.parametrize("name", ["claude", "command"])
def test_missing_binary_is_not_installed(tmp_path, env, name):
    adapter = adapters.get(name)
    binary = resolve_bin("disputatio-no-such-cli")
    inv = adapter.build(TurnRequest(prompt="p", bin=binary,
                                    options={"argv": ["disputatio-no-such-cli"]}))
    cap = transport.run(inv, tmp_path, 30, tmp_path / "raw", "turn", env)
    assert cap.spawn_error and "No such file" in cap.spawn_error
    result = adapter.parse(cap)
    assert result.failure == NOT_INSTALLED and "disputatio-no-such-cli" in result.message


def test_a_script_whose_interpreter_is_missing_is_not_installed(tmp_path, env):
    """As execve says it (ENOENT), not as the execvp of bwrap or setpriv would: exit 127."""
    script = tmp_path / "cli"
    script.write_text("#!/nonexistent/interpreter\necho never\n")
    script.chmod(0o755)
    cap = run(tmp_path, [str(script)], env)
    assert cap.spawn_error == f"{script}: No such file or directory"
    assert adapters.get("command").parse(cap).failure == NOT_INSTALLED


def test_a_relative_program_is_found_from_the_turns_directory(tmp_path, env):
    work = tmp_path / "work"
    (work / "tools").mkdir(parents=True)
    tool = work / "tools" / "agent"
    tool.write_text(f"#!{sys.executable}\nprint('found from', __import__('os').getcwd())\n")
    tool.chmod(0o755)
    cap = transport.run(Invocation(argv=("tools/agent",), env={}), work, 30, tmp_path / "raw",
                        "turn", env)
    assert cap.spawn_error is None and cap.exit_code == 0, cap.spawn_error
    assert cap.read_stdout().strip() == f"found from {work}"


def test_a_turn_runs_when_descriptors_above_1024_are_in_use(tmp_path, env):
    """The exit is waited for with poll(), which takes any descriptor; select() refuses one
    numbered 1024 or more, and a process holding many files hands those out."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if min(hard, 1 << 16) < 1200:
        pytest.skip(f"the open-files limit ({hard}) is below 1200")
    if soft < 1200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 1 << 16), hard))
    held = []
    try:
        while not held or held[-1] < 1100:
            held.append(os.dup(0 if not held else held[0]))
        cap = run(tmp_path, AGENT, env, timeout=30)
        assert cap.exit_code == 0 and not cap.timed_out, cap.read_stderr()
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


_HOST = """
import sys
from pathlib import Path
from disputatio import procs
from disputatio.adapters import transport
from disputatio.adapters.base import Invocation
if sys.argv[1] == "preexec":  # as on a machine without setpriv
    procs.setpriv = lambda: None
launch, preexec = procs.orphan_guard(["agent"], bwrap=False)
assert (launch == ["agent"] and preexec is not None) == (sys.argv[1] == "preexec"), launch
work = Path(sys.argv[2])
transport.run(Invocation(argv=tuple(sys.argv[3:]), env={}), work, None, work / "raw", "turn")
"""


@pytest.mark.process
@pytest.mark.parametrize("guard", ["setpriv", "preexec"])
def test_the_agent_dies_with_a_killed_disputatio_whichever_guard_is_used(tmp_path, env, guard):
    """The agent's parent-death signal, set by setpriv where it is or by a preexec function
    where it is not: a ``kill -9`` of disputatio takes the agent with it either way."""
    if guard == "setpriv" and procs.setpriv() is None:
        pytest.skip("no setpriv that sets a parent-death signal on this machine")
    pids = tmp_path / "pids"
    pids.mkdir()
    host = subprocess.Popen([sys.executable, "-c", _HOST, guard, str(tmp_path), *AGENT],
                            env={**env, "FAKE_HANG": "1", "FAKE_PID_DIR": str(pids)},
                            stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: list(pids.iterdir()) or host.poll() is not None, 30, "the agent runs")
        assert host.poll() is None, host.stderr.read().decode() if host.stderr else ""
        agent = int(next(pids.iterdir()).name.rsplit("-", 1)[1])
        assert alive(agent)
    finally:
        host.kill()
        host.wait()
    wait_for(lambda: not alive(agent), 5, "the agent died with its disputatio")
