"""The write fence with each real CLI keeping its state where it does by default, under ``$HOME``.

Why: the rest of the real tier points every CLI at a home of its own through its override
variable (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ...), so only the variable branch of each
adapter's ``state_dirs`` was ever exercised. A user who sets none of them runs each CLI with
``~/.claude``, ``~/.codex``, ``~/.gemini``, ``~/.copilot``, ``~/.pi`` and whatever else it
writes in the home directory. Here every CLI gets a fresh ``HOME`` holding, at its default
place, the configuration ``cli_setup`` would have put in the override directory; one turn runs
exactly as the engine runs it, under a required fence, with one harmless tool call (codex's
shell brings up its own bubblewrap sandbox, whose helper aliases live in its state dir). The
turn must answer, and nothing in ``HOME`` may change outside the paths the adapter declares.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from disputatio.adapters import base as adapter_base
from disputatio.adapters import fence as fencing
from disputatio.adapters import get, transport
from disputatio.adapters.base import TurnRequest, TurnResult
from disputatio.gitenv import agent_env
from support.real_tier import read_call

from .clis import NAMES, cli_setup, shared_xdg_cache
from .model_server import Rule, ScriptedModelServer, Text

pytestmark = pytest.mark.real

TURN_TIMEOUT_S = 90
ANSWER = "DEFAULT_HOME_OK"
FILE_CONTENT = "hello-default-home"

# Where the directory each override variable names lives when the variable is unset, relative
# to HOME. gemini's variable replaces the home directory itself (its state is ``.gemini``
# below it); pi's agent dir is ``~/.pi/agent`` and its sessions are kept inside that.
DEFAULT_PLACES: dict[str, dict[str, str]] = {
    "claude": {"CLAUDE_CONFIG_DIR": ".claude"},
    "codex": {"CODEX_HOME": ".codex"},
    "gemini": {"GEMINI_CLI_HOME": "."},
    "copilot": {"COPILOT_HOME": ".copilot", "XDG_CACHE_HOME": ".cache"},
    "pi": {"PI_CODING_AGENT_DIR": ".pi/agent", "PI_CODING_AGENT_SESSION_DIR": ".pi/agent/sessions"},
}
# gemini's TMPDIR points into its override dir; under the fence every turn has a private /tmp
DROPPED = ("TMPDIR",)


def default_home_setup(name: str, url: str, home: Path, staging: Path
                       ) -> tuple[dict[str, str], list[str], str | None]:
    """``cli_setup`` for ``name``, with every override variable dropped and what it put in the
    directory the variable named moved to the CLI's default place under ``home``. Env-only
    settings (base URL, key, retry knobs) stay. copilot's 235 MB payload, which the rest of the
    tier shares through ``XDG_CACHE_HOME``, is copied to ``~/.cache/copilot`` as a user who
    ran copilot before has it (unpacking it afresh costs more than this file's time budget)."""
    env, args, model = cli_setup(name, url, staging)
    for var, place in DEFAULT_PLACES[name].items():
        source = Path(env.pop(var))
        target = home / place
        target.mkdir(parents=True, exist_ok=True)
        if var == "XDG_CACHE_HOME":
            shutil.copytree(shared_xdg_cache() / "copilot", target / "copilot", symlinks=True)
        elif source.is_dir() and staging in source.parents:
            shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
    for var in DROPPED:
        env.pop(var, None)
    shutil.rmtree(staging)
    env["HOME"] = str(home)
    overrides = {s.var for s in get(name).state_dirs if s.var}
    assert not overrides & set(env), f"{name}: an override is still set: {overrides & set(env)}"
    return env, args, model


def tree(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every entry under ``root`` (symlinks not followed): kind, size and mtime by path."""
    out: dict[str, tuple[str, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for entry in (*dirnames, *filenames):
            p = os.path.join(dirpath, entry)
            st = os.lstat(p)
            kind = "link" if os.path.islink(p) else "dir" if os.path.isdir(p) else "file"
            out[os.path.relpath(p, root)] = (kind, st.st_size if kind == "file" else 0,
                                              st.st_mtime_ns)
    return out


def changed(before: dict, after: dict) -> list[str]:
    """Paths created, removed or modified between two ``tree`` walks."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def outside(paths: list[str], home: Path, declared: list[Path]) -> list[str]:
    """The changed paths that lie in no declared state path (a parent dir of one, created so it
    could be bound, counts as inside)."""
    real = [Path(os.path.realpath(d)) for d in declared]

    def inside(rel: str) -> bool:
        p = Path(os.path.realpath(home / rel)) if (home / rel).exists() else home / rel
        return any(p == d or d in p.parents or p in d.parents for d in real)

    return [p for p in paths if not inside(p)]


@pytest.fixture
def fence() -> Iterator[fencing.Fence]:
    """The fence, required: without one there is nothing to prove here."""
    found = fencing.available()
    if not found.on:
        pytest.skip(f"no write fence on this machine: {found.reason}")
    transport.use_fence(fencing.choose("require"))
    yield found
    transport.use_fence(None)


def run_turn(name: str, bins: dict[str, Path], server: ScriptedModelServer, root: Path,
             seed: dict[str, str] | None = None
             ) -> tuple[TurnResult, list[str], list[str], str]:
    """One turn of ``name`` as the engine runs it, with HOME at ``root/home`` (holding ``seed``:
    files by path relative to HOME, as a user's home has them). Returns the result, the HOME
    paths it changed, those outside the declared state paths, and stderr."""
    home, work = root / "home", root / "work"
    home.mkdir()
    work.mkdir()
    (work / "hello.txt").write_text(FILE_CONTENT + "\n")
    env_add, extra, model = default_home_setup(name, server.url, home, root / "staging")
    for rel, text in (seed or {}).items():
        (home / rel).write_text(text)
    adapter = get(name)
    request = TurnRequest(prompt="Say hello", bin=str(bins[name]), model=model,
                          timeout_s=TURN_TIMEOUT_S, extra_args=tuple(extra),
                          env={**env_add, "TERM": "dumb"})
    invocation = adapter.build(request)
    # no override variable and no XDG dir from the environment this test runs in
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
            "TERM": "dumb", "HOME": str(home)}
    env = agent_env(base, work)
    declared = fencing.state_paths(adapter.state_dirs, {**env, **invocation.env})
    before = tree(home)
    capture = transport.run(invocation, work, TURN_TIMEOUT_S, root / "raw", name, env,
                            writable=[work], state=adapter.state_dirs)
    capture = adapter_base.collect(adapter, capture, {**env, **invocation.env})
    diff = changed(before, tree(home))
    return adapter.parse(capture), diff, outside(diff, home, declared), capture.read_stderr()


@pytest.mark.parametrize("name", NAMES)
def test_a_fenced_turn_keeps_to_the_default_state_dirs(name, real_clis, model_server, tmp_path,
                                                       fence):
    model_server.script(Rule("Say hello", read_call(name, tmp_path / "work")),
                        Rule(None, Text(ANSWER)))
    result, diff, stray, stderr = run_turn(name, real_clis, model_server, tmp_path)
    assert result.ok and result.text == ANSWER, f"{result}\n--- stderr\n{stderr[-3000:]}"
    results = [r for t in model_server.turns for r in t.tool_results]
    assert any(FILE_CONTENT in r for r in results), results
    assert stray == [], f"written under HOME outside {name}'s state dirs: {stray}"


# what ``~/.claude.json`` holds for someone who has run claude before
RETURNING_CLAUDE = {".claude.json": json.dumps(
    {"numStartups": 3, "firstStartTime": "2026-01-01T00:00:00.000Z", "userID": "u" * 64})}


def test_claude_with_a_claude_json_from_earlier_runs(real_clis, model_server, tmp_path, fence):
    """claude 2.1.197 saves ``~/.claude.json`` only through a lock dir and a temporary file in
    HOME and a rename, never in place, so a grant of the file itself would serve it nothing and
    would only let an agent rewrite it (its MCP servers run unfenced the next time you use
    claude): the file stays read-only, claude carries on, the turn answers."""
    model_server.script(Rule("Say hello", read_call("claude", tmp_path / "work")),
                        Rule(None, Text(ANSWER)))
    result, diff, stray, stderr = run_turn("claude", real_clis, model_server, tmp_path,
                                           seed=RETURNING_CLAUDE)
    assert result.ok and result.text == ANSWER, f"{result}\n--- stderr\n{stderr[-3000:]}"
    assert stray == [], f"written under HOME outside claude's state dirs: {stray}"
    assert (tmp_path / "home" / ".claude.json").read_text() == RETURNING_CLAUDE[".claude.json"]


@pytest.mark.parametrize("name, seed, written", [
    # its device id, in the XDG cache beside its own
    ("copilot", None, [".cache/Microsoft", ".cache/Microsoft/DeveloperTools",
                       ".cache/Microsoft/DeveloperTools/deviceid"]),
    ("claude", RETURNING_CLAUDE, [".claude.json"]),
])
def test_without_the_fence_the_same_turns_write_outside(name, seed, written, real_clis,
                                                        model_server, tmp_path):
    """The control: unfenced, the same turns do write in HOME outside the declared paths, so
    an empty list above means the fence refused those writes, not that the walk missed them."""
    model_server.script(Rule("Say hello", read_call(name, tmp_path / "work")),
                        Rule(None, Text(ANSWER)))
    transport.use_fence(fencing.OFF)
    try:
        result, diff, stray, stderr = run_turn(name, real_clis, model_server, tmp_path, seed)
    finally:
        transport.use_fence(None)
    assert result.ok and result.text == ANSWER, f"{result}\n--- stderr\n{stderr[-3000:]}"
    assert stray == written, diff
