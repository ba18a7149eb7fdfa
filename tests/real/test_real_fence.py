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
import yaml

from disputatio.adapters import fence as fencing
from disputatio.adapters import get, transport
from disputatio.adapters.base import Invocation, TurnRequest, TurnResult
from disputatio.gitenv import agent_env
from support.real_tier import WIRE, git, run_debate

from .clis import NAMES, clean_env, cli_setup, participant_entry, write_lineup
from .model_server import Rule, ScriptedModelServer, Steps, ToolCall

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
            ToolCall("Bash", {"command": f"git -c core.pager='touch {out('pager')}' log",
                              "description": "log with a pager"}),
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
            ToolCall("apply_patch", {"input": f"*** Begin Patch\n*** Add File: {out('patch')}"
                                              "\n+x\n*** End Patch\n"}),
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
        argv.remove(next(a for a in argv if a.startswith("--available-tools=")))
        argv.append("--allow-all")  # tools, and paths outside the working directory
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


@pytest.mark.parametrize("fenced", [True, False], ids=["fence", "no-fence"])
@pytest.mark.parametrize("cli", NAMES)
def test_each_attempt_is_refused_with_the_shipped_flags(cli, fenced, real_clis, model_server,
                                                        targets, tmp_path, request):
    """Inside the fence, and also without it: the CLIs' own settings now stop every known
    escape (defence in depth; docs/adapters.md says which layer stops what)."""
    calls = attempts(cli, targets)
    model_server.script(Rule(on_wire(cli), Steps(calls)))
    fence = request.getfixturevalue("fence") if fenced else fencing.OFF
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


def inside(cli: str, checkout: Path) -> ToolCall:
    """A write into the agent's own checkout: it lands whenever the tool really ran (the
    positive control of the opened-up runs)."""
    target = str(checkout / f"{cli}-inside")
    return {
        "claude": ToolCall("Bash", {"command": f"touch {target}", "description": "x"}),
        "codex": ToolCall("exec_command", {"cmd": f"touch {target}"}),
        "gemini": ToolCall("run_shell_command", {"command": f"touch {target}",
                                                 "description": "x"}),
        "copilot": ToolCall("bash", {"command": f"touch {target}", "description": "x"}),
        "pi": ToolCall("bash", {"command": f"touch {target}"}),
    }[cli]


def shell_and_write(cli: str, t: Targets) -> tuple[ToolCall, ...]:
    """The attempts that go through once a CLI's own settings are off: its shell (to the
    outside dir, the user's repository and the real /tmp) and its file-writing tool."""
    calls = attempts(cli, t, tag="-open")
    keep = {"claude": (0, 5), "codex": (0, 3), "gemini": (0, 1), "copilot": (0, 1),
            "pi": (0, 1)}[cli]
    return tuple(calls[i] for i in keep)


@pytest.mark.parametrize("cli", NAMES)
def test_with_the_clis_own_settings_off_only_the_fence_stops_the_writes(
        cli, real_clis, model_server, targets, tmp_path, fence):
    run = tmp_path / "run"
    calls = (*shell_and_write(cli, targets), inside(cli, run / "checkout"))
    model_server.script(Rule(on_wire(cli), Steps(calls)))
    turn = run_turn(cli, real_clis, model_server, run, fence, open_flags=True)
    info = turn.info(model_server)
    assert turn.result.ok, info
    made = [r.reply for r in model_server.turns if isinstance(r.reply, ToolCall)]
    assert made == list(calls), info
    # the tools really ran (the write into the checkout landed), and nothing else did
    assert (turn.checkout / f"{cli}-inside").exists(), info
    assert targets.landed() == [], info


@pytest.mark.parametrize("cli", NAMES)
def test_without_the_fence_the_same_attempts_land(cli, real_clis, model_server, targets,
                                                   tmp_path):
    """The control: the opened-up run above, with no fence, writes outside its checkout, so
    an empty outside directory there means the fence stopped something real."""
    calls = shell_and_write(cli, targets)
    model_server.script(Rule(on_wire(cli), Steps(calls)))
    turn = run_turn(cli, real_clis, model_server, tmp_path / "run", fencing.OFF, open_flags=True)
    info = turn.info(model_server)
    assert turn.result.ok, info
    landed = targets.landed()
    assert f"{cli}-open-shell" in landed, info
    assert any(targets.tmp_mark in name for name in landed), info  # repo and /tmp were open


def fenced_lineup(path: Path, bins: dict[str, Path], server: ScriptedModelServer,
                  homes: Path) -> Path:
    """The five CLIs as debaters, claude as the judge and gemini as the synthesizer, each with
    this venv's test runner on PATH (their escapes include running the tests)."""
    write_lineup(path, bins, server.url, homes)
    data = yaml.safe_load(path.read_text())
    data["synthesizer"] = participant_entry("gemini", bins["gemini"], server.url,
                                            homes / "synthesizer", display="synthesizer")
    for entry in (*data["participants"], data["judge"], data["synthesizer"]):
        entry["env"]["PATH"] = WITH_PYTEST
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_debate_of_escape_attempts_completes_and_nothing_lands_outside(
        real_clis, model_server, targets, tmp_path, fence):
    calls = {cli: attempts(cli, targets) for cli in NAMES}
    model_server.script(*(Rule(on_wire(cli), Steps(calls[cli])) for cli in NAMES))
    config = fenced_lineup(tmp_path / "debate.yaml", real_clis, model_server, tmp_path / "homes")
    head = git(targets.repo, "rev-parse", "HEAD")
    run = run_debate(tmp_path, config, targets.repo, "--rounds", "1", "--fence", "require")
    info = run.info(model_server)
    assert run.returncode == 0 and run.folder, info
    assert run.stdout.splitlines() == [str(run.folder / "final-report.md")], info
    data = run.data()
    assert data["status"] == "resolved", info
    started = json.loads((run.folder / "events.jsonl").read_text().splitlines()[0])["data"]
    assert started["fence"] == fence.mechanism, started
    # every turn answered: proposals, reactions, the judge's ruling and the synthesizer's report
    phases = [(t["phase"], t["adapter"], t["ok"]) for t in data["turns"]]
    assert sorted(p for p in phases if p[0] in ("respondeo", "redactio")) == [
        ("redactio", "gemini", True), ("respondeo", "claude", True)], info
    assert len([p for p in phases if p[0] in ("proposal", "reaction")]) == 2 * len(NAMES), info
    assert all(ok for _, _, ok in phases), phases
    # nothing landed outside a checkout: not beside them, not in the user's repository (which
    # is exactly as it was), not in the real /tmp
    assert targets.landed() == [], info
    assert git(targets.repo, "status", "--porcelain") == ""
    assert git(targets.repo, "rev-parse", "HEAD") == head
    # each CLI made every attempt in every turn it had, and each came back refused or failed
    turns_of = {cli: 2 for cli in NAMES} | {"claude": 3, "gemini": 3}  # + judge, synthesizer
    for cli in NAMES:
        reqs = [r for r in model_server.turns if WIRE[cli](r)]
        made = [r.reply for r in reqs if isinstance(r.reply, ToolCall)]
        assert len(made) == turns_of[cli] * len(calls[cli]), (cli, made)
        answers = [r.tool_results[-1] for r in reqs if r.tool_results]
        assert len(answers) == len(made), (cli, answers)
        refused = [a for a in answers if any(w.lower() in a.lower() for w in REFUSED)]
        assert refused == answers, (cli, [a[-300:] for a in answers if a not in refused])
    # and the ledger says so where the CLI reports it: claude's permission denials, one per
    # Bash attempt (Write and Edit are not offered at all: "No such tool available")
    bash = sum(1 for c in calls["claude"] if c.name == "Bash")
    claude = [t for t in data["turns"] if t["adapter"] == "claude"]
    assert [t["evidence"]["denied"] for t in claude] == [bash] * 3, claude


@pytest.mark.parametrize("fenced", [True, False], ids=["fence", "no-fence"])
def test_codex_keeps_its_own_sandbox_inside_the_fence(fenced, real_clis, model_server, targets,
                                                      tmp_path, request):
    """codex's bubblewrap sandbox nests inside ours (its helpers live in CODEX_HOME, a state
    dir the fence leaves writable): it reads, and refuses writes, with the fence and without."""
    run = tmp_path / "run"
    calls = (ToolCall("exec_command", {"cmd": "cat a.py"}),
             ToolCall("exec_command", {"cmd": "touch inside"}),
             ToolCall("exec_command", {"cmd": f"touch {targets.path('codex')}"}))
    model_server.script(Rule(on_wire("codex"), Steps(calls)))
    fence = request.getfixturevalue("fence") if fenced else fencing.OFF
    turn = run_turn("codex", real_clis, model_server, run, fence)
    info = turn.info(model_server)
    assert turn.result.ok, info
    read, inside_, outside = (r.tool_results[-1] for r in model_server.turns[1:])
    assert "a = 1" in read and "Process exited with code 0" in read, info
    assert "Read-only file system" in inside_ and "Read-only file system" in outside, info
    assert not (turn.checkout / "inside").exists() and targets.landed() == [], info


def test_claude_refuses_each_listed_escape_and_runs_each_listed_read(real_clis, model_server,
                                                                      tmp_path, fence):
    """The real binary against the model of its rule matching that the unit tests use
    (tests/test_adapter_claude.py): every escape listed there is refused, every read runs."""
    from support.claude_commands import ESCAPES, READS

    commands = [*ESCAPES, *READS]
    calls = tuple(ToolCall("Bash", {"command": c, "description": "x"}) for c in commands)
    model_server.script(Rule(on_wire("claude"), Steps(calls)))
    turn = run_turn("claude", real_clis, model_server, tmp_path / "run", fence)
    assert turn.result.ok, turn.info(model_server)
    answers = [r.tool_results[-1] for r in model_server.turns[1:]]
    assert len(answers) == len(commands), turn.info(model_server)
    said = dict(zip(commands, answers, strict=True))
    ran = [c for c in ESCAPES if "has been denied" not in said[c]]
    refused = [c for c in READS if "has been denied" in said[c]]
    assert (ran, refused) == ([], []), {c: said[c][:200] for c in ran + refused}
    assert turn.result.evidence["denied"] == len(ESCAPES), turn.result
