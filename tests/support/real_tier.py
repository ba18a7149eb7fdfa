"""What the real-CLI tests share: whole debates run as a user runs them, how each CLI's
requests look on the wire, the user's small repository, and a harmless tool call per CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from real.clis import clean_env
from real.model_server import Request, ScriptedModelServer, ToolCall

RUN_TIMEOUT_S = 300
QUESTION = "Should calc.add reject non-numbers?"

# how each CLI's turn requests look on the wire (cli_setup picks the models)
WIRE: dict[str, Callable[[Request], bool]] = {
    "claude": lambda r: r.family == "anthropic" and (r.model or "").startswith("claude-"),
    "codex": lambda r: r.family == "responses" and r.model == "gpt-5.5",
    "gemini": lambda r: r.family == "gemini" and r.model == "gemini-2.5-flash",
    "copilot": lambda r: r.family == "chat" and r.model == "gpt-5.4",
    "pi": lambda r: r.family == "chat" and r.model == "stub-chat",
}


@dataclass
class Debate:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    folder: Path | None

    def data(self) -> dict:
        return json.loads((self.folder / "debate.json").read_text())

    def info(self, server: ScriptedModelServer) -> str:
        reqs = [(r.family, r.kind, r.model, r.status) for r in server.requests]
        return (f"exit {self.returncode} after {self.seconds:.1f}s\nrequests: {reqs}\n"
                f"--- stdout\n{self.stdout}\n--- stderr\n{self.stderr[-4000:]}")


def git(repo: Path, *args: str) -> str:
    ident = ["-c", "user.email=t@t", "-c", "user.name=t"]
    return subprocess.run(["git", *ident, *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def calc_repo(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    """The user's repository: calc.py (and ``files``), committed."""
    path = tmp_path / "calcrepo"
    path.mkdir()
    (path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    for name, text in (files or {}).items():
        (path / name).write_text(text)
    git(path, "init", "-q")
    git(path, "add", ".")
    git(path, "commit", "-qm", "calc")
    return path


def run_debate(tmp_path: Path, config: Path, repo: Path, *args: str,
               on_line: Callable[[str], None] | None = None) -> Debate:
    """``python -m disputatio QUESTION --config … --repo …`` with cwd a fresh dir."""
    work = tmp_path / "work"
    work.mkdir()
    argv = [sys.executable, "-m", "disputatio", QUESTION, "--config", str(config),
            "--repo", str(repo), *args]
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=work, env=clean_env(tmp_path / "user-home"),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(RUN_TIMEOUT_S, proc.kill)  # a hung run fails, never blocks
    watchdog.start()
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
    reader.start()
    err = []
    for line in proc.stderr:  # progress arrives line by line (no TTY: plain lines)
        err.append(line)
        if on_line:
            on_line(line)
    proc.wait()
    watchdog.cancel()
    reader.join(timeout=10)
    stdout = "".join(out)
    lines = stdout.splitlines()
    folder = Path(lines[0]).parent if len(lines) == 1 else None
    return Debate(proc.returncode, stdout, "".join(err), time.monotonic() - started, folder)


def by_cli(server: ScriptedModelServer) -> dict[str, list[Request]]:
    return {name: [r for r in server.turns if match(r)] for name, match in WIRE.items()}


def read_call(name: str, cwd: Path) -> ToolCall:
    """A harmless read of hello.txt: the positive control that tool calls round-trip."""
    target = str(cwd / "hello.txt")
    return {
        "claude": ToolCall("Read", {"file_path": target}),
        "codex": ToolCall("exec_command", {"cmd": "cat hello.txt"}),
        "gemini": ToolCall("read_file", {"file_path": "hello.txt"}),
        "copilot": ToolCall("view", {"path": target}),
        "pi": ToolCall("read", {"path": "hello.txt"}),
    }[name]
