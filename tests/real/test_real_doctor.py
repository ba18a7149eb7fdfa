"""``--doctor`` and ``--init`` against the five real CLIs.

Why: a canary is only worth running if it tells a healthy CLI from a logged-out one in the CLI's
own words, within the timeout, and ``--init`` can only be trusted if the lineup it writes comes
from CLIs that really answered.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from disputatio import adapters
from disputatio.config import DebateConfig

from .clis import (
    NAMES,
    PINNED,
    STUB_KEY_VAR,
    clean_env,
    cli_setup,
    lingering,
    shared_xdg_cache,
    write_lineup,
)
from .model_server import Rule, Text

pytestmark = pytest.mark.real

RUN_TIMEOUT_S = 300
# each CLI's own words when it has no credentials at all
NO_AUTH = {
    "claude": ("auth", "Not logged in"),
    "gemini": ("auth", "Please set an Auth method"),
    "copilot": ("auth", "No authentication information found"),
    "pi": ("auth", "No API key found"),
}
LINE = re.compile(r"^([✓✗]) (\S+) \((\S+), (\S+) ([^)]*)\): (.*)$")


def disputatio(*args: str, cwd: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess,
                                                                     float]:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "disputatio", *args], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S)
    return proc, time.monotonic() - started


def health_lines(stderr: str) -> dict[str, re.Match]:
    """``{adapter: match}`` for every ✓/✗ line (groups: mark, name, vendor, adapter, version,
    rest)."""
    found = {}
    for line in stderr.splitlines():
        m = LINE.match(line)
        if m:
            found[m.group(4)] = m
    return found


def pinned(name: str) -> str:
    return PINNED[name].rsplit("@", 1)[1]


def test_doctor_passes_five_clis_pointed_at_the_server(real_clis, model_server, tmp_path):
    model_server.script(Rule("connectivity check", Text("OK")))
    config = write_lineup(tmp_path / "debate.yaml", real_clis, model_server.url,
                          tmp_path / "homes")
    proc, seconds = disputatio("--doctor", "--config", str(config), cwd=tmp_path,
                               env=clean_env(tmp_path / "user-home"))
    info = f"exit {proc.returncode} in {seconds:.1f}s\n{proc.stderr}"
    assert proc.returncode == 0, info
    assert proc.stdout == "", info
    lines = health_lines(proc.stderr)
    # the judge is the claude participant under another name: checked once
    assert sorted(lines) == sorted(NAMES), info
    for name, m in lines.items():
        assert m.group(1) == "✓" and m.group(3) == adapters.get(name).vendor, info
        assert m.group(6).startswith("ok in "), info
        # copilot's "1.0.102." keeps its sentence's full stop: see tests/test_doctor.py
        assert m.group(5).rstrip(".") == pinned(name), info
    assert len([r for r in model_server.turns if "connectivity check" in r.prompt]) >= 5
    assert "all 5 CLIs healthy" in proc.stderr, info
    print(f"\ndoctor, five healthy CLIs: {seconds:.1f}s\n{proc.stderr}")


def bare_participant(name: str, binary: Path, home: Path) -> dict:
    """The CLI in an empty home of its own: no credentials, no server, no API key."""
    home.mkdir(parents=True)
    own = {"claude": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME", "gemini": "GEMINI_CLI_HOME",
           "copilot": "COPILOT_HOME", "pi": "PI_CODING_AGENT_DIR"}[name]
    (home / name).mkdir()
    env = {"HOME": str(home), own: str(home / name)}
    if name == "copilot":  # its 235 MB runtime is unpacked once into the shared cache
        env["XDG_CACHE_HOME"] = str(shared_xdg_cache())
    return {"adapter": name, "bin": str(binary), "env": env}


def test_doctor_without_credentials_reports_each_clis_own_reason(real_clis, tmp_path):
    """With the default canary timeout (90 s): every CLI must say what is wrong by itself, or
    be recognised as only retrying (codex with no network never stops), within seconds."""
    homes = tmp_path / "homes"
    data = {"participants": [bare_participant(n, real_clis[n], homes / n) for n in NAMES]}
    data["judge"] = {**data["participants"][0], "name": "judge"}
    config = tmp_path / "bare.yaml"
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    env = clean_env(tmp_path / "user-home")
    assert not [k for k in env if "KEY" in k or "TOKEN" in k]
    proc, seconds = disputatio("--doctor", "--config", str(config), cwd=tmp_path, env=env)
    info = f"exit {proc.returncode} in {seconds:.1f}s\n{proc.stderr}"
    assert proc.returncode == 1, info
    assert proc.stdout == "", info
    lines = health_lines(proc.stderr)
    assert sorted(lines) == sorted(NAMES), info
    for name, m in lines.items():
        assert m.group(1) == "✗", info
        failure, message = m.group(6).split(": ", 1)
        if name in NO_AUTH:
            assert (failure, NO_AUTH[name][1] in message) == (NO_AUTH[name][0], True), info
        elif "waiting for network" in message:  # codex, no network: it would retry forever
            assert failure == "api_error", info
            assert message.startswith("codex cannot reach its API and only retries"), info
        else:  # codex with a network: the API refuses the missing credentials
            assert failure == "auth", info
    assert seconds < 30, info
    assert "5 of 5 CLIs failed" in proc.stderr, info
    assert lingering(str(homes)) == [], "a CLI outlived the doctor"
    print(f"\ndoctor without credentials: {seconds:.1f}s\n{proc.stderr}")


def init_environment(real_clis: dict[str, Path], url: str, tmp_path: Path) -> dict[str, str]:
    """A user's environment with the five CLIs on PATH, each set up for the server by env.

    Every ``cli_setup`` shares one home (each CLI keeps its files in its own subdir), so the
    env dicts merge. codex's provider cannot come from env: it goes into
    ``$CODEX_HOME/config.toml``. pi's models.json is already in ``$PI_CODING_AGENT_DIR``, but
    with ANTHROPIC_API_KEY (claude's) in the env and no ``--model``, pi prefers its built-in
    anthropic provider (which ignores ANTHROPIC_BASE_URL): its settings name the stub default.
    """
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, binary in real_clis.items():
        (bindir / name).symlink_to(binary)
    home = tmp_path / "home"
    merged: dict[str, str] = {}
    for name in NAMES:
        env, _, _ = cli_setup(name, url, home)
        clash = {k for k in env if k in merged and merged[k] != env[k]}
        assert not clash, clash
        merged.update(env)
    (home / "codex" / "config.toml").write_text(
        'model = "gpt-5.5"\nmodel_provider = "stub"\n\n[model_providers.stub]\n'
        f'name = "stub"\nbase_url = "{url}/v1"\nenv_key = "{STUB_KEY_VAR}"\n'
        'wire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\n')
    pi_settings = home / "pi" / "settings.json"
    pi_settings.write_text(json.dumps({**json.loads(pi_settings.read_text()),
                                       "defaultProvider": "stub", "defaultModel": "stub-chat"}))
    base = clean_env(home, XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    return {**base, **merged, "PATH": f"{bindir}{os.pathsep}{base['PATH']}"}


def test_init_writes_a_lineup_of_the_working_clis(real_clis, model_server, tmp_path):
    env = init_environment(real_clis, model_server.url, tmp_path)
    target = tmp_path / "xdg" / "disputatio" / "config.yaml"
    proc, seconds = disputatio("--init", cwd=tmp_path, env=env)
    info = f"exit {proc.returncode} in {seconds:.1f}s\n{proc.stderr}"
    assert proc.returncode == 0, info
    assert proc.stdout == f"{target}\n", info
    lines = health_lines(proc.stderr)
    assert sorted(lines) == sorted(NAMES) and all(m.group(1) == "✓" for m in lines.values()), info
    written = yaml.safe_load(target.read_text())
    cfg = DebateConfig.model_validate(written)
    assert [p.adapter for p in cfg.participants] == list(NAMES), written
    assert all(p.bin is None for p in cfg.participants), written  # all found on PATH
    assert (cfg.judge.adapter, cfg.judge.name) == ("claude", "judge"), written
    # codex (run with no -c flags) took its provider from $CODEX_HOME/config.toml
    assert any(r.family == "responses" and r.model == "gpt-5.5" for r in model_server.turns)
    first = target.read_text()

    again, _ = disputatio("--init", cwd=tmp_path, env=env)
    assert again.returncode == 0, again.stderr
    backups = sorted(target.parent.glob("config.yaml.bak-*"))
    assert len(backups) == 1 and backups[0].read_text() == first, again.stderr
    assert f"backed up the previous config to {backups[0]}" in again.stderr

    # a backup name has one-second resolution: a wrong backup by --force must not hide
    # under the name of the previous one
    time.sleep(1.1)
    forced, _ = disputatio("--init", "--force", cwd=tmp_path, env=env)
    assert forced.returncode == 0, forced.stderr
    assert sorted(target.parent.glob("config.yaml.bak-*")) == backups, forced.stderr
    assert "backed up" not in forced.stderr
    assert yaml.safe_load(target.read_text()) == written
    assert lingering(str(tmp_path / "home")) == []
    print(f"\ninit: {seconds:.1f}s per run\n{proc.stderr}{target.read_text()}")

