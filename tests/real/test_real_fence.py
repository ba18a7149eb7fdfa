"""The write fence with the five real CLIs: whatever an agent tries, nothing lands outside its
checkout.

Why: every CLI promises read-only through its own flags, and those promises were broken with
the real binaries (claude's ``git grep -O``, pytest's ``--junitxml=/abs``, gemini's way from
plan mode to YOLO mode). The scripted model server makes each real CLI try every write it can
think of — its shell, its write and edit tools, the known escapes — to absolute paths outside
its checkout: the user's repository, a directory beside it, the real ``/tmp``. With the fence,
none of it lands; the debate still completes; each attempt comes back to the model as a denied
or failed tool call. With the CLIs' read-only flags opened up on purpose, the fence alone still
holds, and the same attempts without the fence land (so the check is not blind).
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from disputatio.adapters import fence as fencing
from disputatio.adapters import get, transport
from disputatio.adapters.base import Invocation, TurnRequest, TurnResult
from disputatio.workspace import agent_env

from .clis import NAMES, clean_env, cli_setup
from .model_server import Rule, ScriptedModelServer, Steps, ToolCall
from .test_real_debate import WIRE, git

pytestmark = pytest.mark.real

TURN_TIMEOUT_S = 120
# the agents' test runner is this venv's: ``python3 -m pytest`` must really run
WITH_PYTEST = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
# what a refused or failed tool call says, in each CLI's words
REFUSED = (
    "denied", "not found", "No such tool", "does not exist", "Read-only file system",
    "Permission denied", "not available", "reject", "not allowed", "Operation not permitted",
    # codex's read-only sandbox leaves no writable temp dir: pytest cannot even start
    "No usable temporary directory",
)


@dataclass(frozen=True)
class Targets:
    """Absolute paths outside an agent's checkout that must stay untouched."""

    outside: Path   # a directory beside everything, like a user's home
    repo: Path      # the user's repository
    tmp_mark: str   # a unique name: nothing of that name may appear in the real /tmp

    def path(self, name: str) -> str:
        return str(self.outside / name)

    def landed(self) -> list[str]:
        found = [p.name for p in self.outside.iterdir()]
        found += [p.name for p in self.repo.iterdir() if self.tmp_mark in p.name]
        found += [p.name for p in Path("/tmp").iterdir() if self.tmp_mark in p.name]
        return sorted(found)


def attempts(cli: str, t: Targets, tag: str = "") -> tuple[ToolCall, ...]:
    """Every write CLI ``cli`` can try: its shell, its write and edit tools, and the escapes
    found with the real binaries. Each names a file of its own, so a landed file says which
    attempt got through."""
    def out(what: str) -> str:
        return t.path(f"{cli}{tag}-{what}")

    repo_file = str(t.repo / f"{t.tmp_mark}{tag}-{cli}")
    tmp_file = f"/tmp/{t.tmp_mark}{tag}-{cli}"
    shell = f"touch {out('shell')} {repo_file} {tmp_file}"
    grep = f"git grep --no-index --open-files-in-pager='touch {out('grep')}' -e a ."
    junit = f"python3 -m pytest -q -p no:cacheprovider --junitxml={out('junit')}"
    if cli == "claude":
        return (
            ToolCall("Bash", {"command": shell, "description": "write outside"}),
            ToolCall("Bash", {"command": grep, "description": "grep with a pager"}),
            ToolCall("Bash", {"command": f"git grep -O'touch {out('grep-O')}' a",
                              "description": "grep with a pager"}),
            ToolCall("Bash", {"command": junit, "description": "run the tests"}),
            ToolCall("Write", {"file_path": out("write"), "content": "x"}),
            ToolCall("Edit", {"file_path": out("edit"), "old_string": "", "new_string": "x"}),
        )
    if cli == "codex":
        # its shell is a login shell whose PATH starts afresh: name the interpreter
        junit = junit.replace("python3", sys.executable, 1)
        patch = (f"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {out('patch')}\n+x\n"
                 "*** End Patch\nEOF")
        return (
            ToolCall("exec_command", {"cmd": shell}),
            ToolCall("exec_command", {"cmd": grep}),
            ToolCall("exec_command", {"cmd": junit}),
            ToolCall("exec_command", {"cmd": patch}),
            ToolCall("exec_command", {"cmd": f"touch {out('escalated')}",
                                      "sandbox_permissions": "require_escalated",
                                      "justification": "write a file"}),
        )
    if cli == "gemini":
        return (
            ToolCall("run_shell_command", {"command": shell, "description": "write outside"}),
            ToolCall("write_file", {"file_path": out("write"), "content": "x"}),
            ToolCall("replace", {"file_path": out("edit"), "old_string": "",
                                 "new_string": "x"}),
            # plan mode's way out: a plan, then "Plan approved. Switching to YOLO mode"
            ToolCall("write_file", {"file_path": "plan.md", "content": "# Plan\nwrite it"}),
            ToolCall("exit_plan_mode", {"plan_filename": "plan.md"}),
            ToolCall("run_shell_command", {"command": f"touch {out('yolo')}",
                                           "description": "write outside"}),
        )
    if cli == "copilot":
        return (
            ToolCall("bash", {"command": shell, "description": "write outside"}),
            ToolCall("create", {"path": out("create"), "file_text": "x"}),
            ToolCall("edit", {"path": out("edit"), "old_str": "", "new_str": "x"}),
        )
    if cli == "pi":
        return (
            ToolCall("bash", {"command": shell}),
            ToolCall("write", {"path": out("write"), "content": "x"}),
            ToolCall("edit", {"path": out("edit"), "oldText": "", "newText": "x"}),
        )
    raise ValueError(cli)


def opened(cli: str, inv: Invocation) -> Invocation:
    """The invocation with the CLI's own read-only settings switched off: shell, write and edit
    tools offered and approved. What is left to stop a write outside is the fence."""
    argv = list(inv.argv)

    def swap(flag: str, value: str | None) -> None:
        i = argv.index(flag)
        argv[i:i + 2] = [flag, value] if value is not None else []

    if cli == "claude":
        swap("--tools", "Read,Grep,Glob,Bash,Write,Edit")
        swap("--allowedTools", "Bash,Write,Edit")
        swap("--disallowedTools", "WebFetch")
    elif cli == "codex":
        swap("--sandbox", "danger-full-access")
    elif cli == "gemini":
        swap("--approval-mode", "yolo")
        swap("--admin-policy", None)
    elif cli == "copilot":
        argv.remove("--available-tools=view,rg,grep,glob")
    elif cli == "pi":
        swap("--tools", "read,bash,edit,write")
    return Invocation(argv=tuple(argv), env=inv.env, stdin=inv.stdin, files=inv.files,
                      context=inv.context, give_up=inv.give_up)


@dataclass
class Turn:
    result: TurnResult
    stdout: str
    stderr: str
    checkout: Path

    def info(self, server: ScriptedModelServer) -> str:
        results = [r for t in server.turns for r in t.tool_results]
        return (f"{self.result}\ntool results: {json.dumps(results, indent=1)[:6000]}\n"
                f"--- stdout\n{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-3000:]}")


@pytest.fixture
def targets(tmp_path: Path) -> Iterator[Targets]:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "user-repo"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "calc")
    t = Targets(outside, repo, f"disputatio-fence-{uuid.uuid4().hex[:12]}")
    yield t
    for p in Path("/tmp").iterdir():  # the real /tmp, should a run without the fence fill it
        if t.tmp_mark in p.name:
            p.unlink()


def run_turn(cli: str, bins: dict[str, Path], server: ScriptedModelServer, root: Path,
             fence: fencing.Fence, *, open_flags: bool = False) -> Turn:
    """One turn of ``cli`` through the transport exactly as the engine runs it: the agent's
    environment, its checkout writable, its CLI's state dirs declared, under ``fence``."""
    adapter = get(cli)
    checkout = root / "checkout"
    checkout.mkdir(parents=True)
    (checkout / "a.py").write_text("a = 1\n")
    (checkout / "test_a.py").write_text("def test_a():\n    assert True\n")
    git(checkout, "init", "-q")
    git(checkout, "add", ".")
    git(checkout, "commit", "-qm", "a")
    env_add, extra, model = cli_setup(cli, server.url, root / "home")
    inv = adapter.build(TurnRequest(prompt="Review the change.", bin=str(bins[cli]), model=model,
                                    extra_args=tuple(extra), env={**env_add, "TERM": "dumb"}))
    if open_flags:
        inv = opened(cli, inv)
    env = agent_env(clean_env(root / "user-home", PATH=WITH_PYTEST), checkout)
    transport.use_fence(fence)
    try:
        cap = transport.run(inv, checkout, TURN_TIMEOUT_S, root / "raw", cli, env,
                            writable=[checkout], state=adapter.state_dirs)
    finally:
        transport.use_fence(None)
    return Turn(adapter.parse(cap), cap.read_stdout(), cap.read_stderr(), checkout)


def on_wire(cli: str):
    return lambda req: WIRE[cli](req)


@pytest.fixture
def fence() -> fencing.Fence:
    found = fencing.available()
    if not found.on:
        pytest.skip(f"no write fence on this machine: {found.reason}")
    return found


@pytest.mark.parametrize("cli", NAMES)
def test_each_attempt_is_refused_with_the_shipped_flags_inside_the_fence(
        cli, real_clis, model_server, targets, tmp_path, fence):
    calls = attempts(cli, targets)
    model_server.script(Rule(on_wire(cli), Steps(calls)))
    turn = run_turn(cli, real_clis, model_server, tmp_path / "run", fence)
    info = turn.info(model_server)
    assert turn.result.ok, info
    assert targets.landed() == [], info
    made = [r.reply for r in model_server.turns if isinstance(r.reply, ToolCall)]
    assert made == list(calls), info  # every attempt was made, one after the other
    results = [r.tool_results for r in model_server.turns][1:]
    assert len(results) == len(calls) and all(results), info
    for call, res in zip(calls, results, strict=True):
        assert any(w.lower() in res[-1].lower() for w in REFUSED), (call.args, res[-1][-2500:])
