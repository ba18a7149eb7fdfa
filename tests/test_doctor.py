"""``--doctor`` and ``--init`` as a user runs them, with no real CLI: simulated participants
and fake ``claude``/``codex``/``gemini`` scripts that print the real CLIs' captured output.

Why: the canary's verdict (✓/✗ in the CLI's own words), the exit codes and what ``--init``
writes (or refuses to write) must hold without any account or network.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml

from disputatio import ledger
from disputatio.config import DebateConfig
from support import ROOT, config_file, invoke, run_init, sim, write_config

CAPTURES = ROOT / "tests" / "fixtures" / "captures"
LINE = re.compile(r"^([✓✗]) (\S+) \((\S+), (\S+) ([^)]*)\): (.*)$")



def lines(stderr: str) -> list[tuple[str, str, str]]:
    """(mark, name, rest) for every ✓/✗ health line."""
    return [(m.group(1), m.group(2), m.group(6)) for m in map(LINE.match, stderr.splitlines())
            if m]


def fake_cli(path: Path, version: str, capture: str | None, exit_code: int = 0,
             stderr: str = "") -> Path:
    """A script standing in for a real CLI: ``--version`` answers ``version``; a turn reads
    the prompt from stdin, logs argv and stdin beside itself, and prints a real capture."""
    body = f'''#!{sys.executable}
import json, pathlib, sys
if "--version" in sys.argv:
    print({version!r})
    sys.exit(0)
prompt = sys.stdin.read()
log = pathlib.Path(__file__).with_suffix(".calls")
with log.open("a") as fh:
    fh.write(json.dumps({{"argv": sys.argv[1:], "stdin": prompt}}) + "\\n")
capture = {str(CAPTURES / capture) if capture else None!r}
if capture:
    sys.stdout.write(pathlib.Path(capture).read_text())
sys.stderr.write({stderr!r})
sys.exit({exit_code})
'''
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)
    return path


def fake_claude(path: Path) -> Path:
    return fake_cli(path, "2.1.197 (Claude Code)", "claude/success.stdout")


def fake_codex(path: Path) -> Path:
    return fake_cli(path, "codex-cli 0.171.0", "codex/success.stdout")


def stale_gemini(path: Path) -> Path:
    """An npm shim left behind by an uninstall: the version still answers, a turn cannot."""
    return fake_cli(path, "0.61.0", None, exit_code=1,
                    stderr="Error: Cannot find module '/usr/lib/node_modules/@google/gemini-cli"
                           "/dist/index.js'\n")


def calls(script: Path) -> list[dict]:
    import json

    log = script.with_suffix(".calls")
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


# --- --doctor ----------------------------------------------------------------------------

def test_doctor_healthy_lineup_exits_0(home):
    cfg = write_config(home / "c.yaml", [sim("a"), sim("b")])
    r = invoke("--doctor", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert [(m, n) for m, n, _ in lines(r.stderr)] == [("✓", "a"), ("✓", "b"), ("✓", "judge")]
    assert all(rest.startswith("ok in ") for _, _, rest in lines(r.stderr))
    assert "all 3 CLIs healthy" in r.stderr
    assert not (home / ".debate").exists()


def test_doctor_demo_lineup(home):
    r = invoke("--doctor", "--demo", cwd=home)
    assert r.returncode == 0, r.stderr
    assert [n for _, n, _ in lines(r.stderr)] == ["advocate", "skeptic", "pragmatist", "judge"]


def test_doctor_names_each_failure_in_the_clis_words(home):
    cfg = write_config(home / "c.yaml", [
        sim("a"), sim("broken", DISPUTATIO_SIM_FAIL=1),
        {"adapter": "claude", "name": "gone", "bin": "/nonexistent/claude"},
    ])
    r = invoke("--doctor", "--config", str(cfg), cwd=home)
    assert r.returncode == 1, r.stderr
    assert r.stdout == ""
    got = {n: (m, rest) for m, n, rest in lines(r.stderr)}
    assert got["a"][0] == "✓" and got["judge"][0] == "✓"
    assert got["broken"] == ("✗", "api_error: simulated failure: the participant was told "
                                   "to fail")
    assert got["gone"][0] == "✗" and got["gone"][1].startswith("not_installed: ")
    assert "/nonexistent/claude" in got["gone"][1]
    assert "✗ gone (Anthropic, claude version unknown): not_installed" in r.stderr
    assert "error: 2 of 4 CLIs failed" in r.stderr


@pytest.mark.process
def test_doctor_canary_times_out(home):
    cfg = write_config(home / "c.yaml", [sim("a"), sim("stuck", DISPUTATIO_SIM_HANG=1)])
    r = invoke("--doctor", "--config", str(cfg), "--timeout", "0.02", cwd=home)
    assert r.returncode == 1, r.stderr
    got = {n: (m, rest) for m, n, rest in lines(r.stderr)}
    assert got["stuck"][0] == "✗" and got["stuck"][1].startswith("timeout: no answer within")
    assert got["a"][0] == "✓"


def test_doctor_real_adapter_through_a_fake_cli(home, tmp_path):
    claude = fake_claude(tmp_path / "bin" / "claude")
    cfg = write_config(home / "c.yaml", [{"adapter": "claude", "bin": str(claude)}, sim("b")])
    r = invoke("--doctor", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    assert "✓ claude (Anthropic, claude 2.1.197): ok in" in r.stderr
    assert "warning:" not in r.stderr  # the tested version: no drift warning
    [call] = calls(claude)
    assert call["argv"][:1] == ["-p"] and "connectivity check" in call["stdin"]


def test_doctor_reads_copilots_version_without_its_full_stop(home, tmp_path):
    copilot = fake_cli(tmp_path / "bin" / "copilot",
                       "GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.",
                       "copilot/success.stdout")
    cfg = write_config(home / "c.yaml", [{"adapter": "copilot", "bin": str(copilot)}, sim("b")])
    r = invoke("--doctor", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    assert "(GitHub, copilot 1.0.102): ok" in r.stderr and "warning:" not in r.stderr


# --- --init ------------------------------------------------------------------------------

def test_init_writes_the_clis_that_answered(tmp_path):
    bindir = tmp_path / "bin"
    claude = fake_claude(bindir / "claude")
    gemini = stale_gemini(bindir / "gemini")
    # codex is not on PATH but in ~/.local/bin, one of the usual install dirs
    codex = fake_codex(tmp_path / "home" / ".local" / "bin" / "codex")
    r = run_init(tmp_path, bindir)
    assert r.returncode == 0, r.stderr
    target = config_file(tmp_path)
    assert r.stdout == f"{target}\n"
    got = {n: (m, rest) for m, n, rest in lines(r.stderr)}
    assert got["claude"][0] == "✓" and got["codex"][0] == "✓", r.stderr
    assert got["gemini"][0] == "✗" and "Cannot find module" in got["gemini"][1], r.stderr
    for missing in ("copilot", "pi"):
        assert f"✗ {missing}: not found on PATH or in the usual install dirs" in r.stderr
    text = target.read_text()
    assert text.startswith("# written by `disputatio --init`")
    data = yaml.safe_load(text)
    DebateConfig.model_validate(data)
    assert data["participants"] == [{"adapter": "claude"},
                                    {"adapter": "codex", "bin": str(codex)}]
    assert data["judge"] == {"adapter": "claude", "name": "judge"}
    assert "wrote a lineup of 2 CLIs, judge claude" in r.stderr
    # each canary went through the adapter's real command line, prompt on stdin
    assert calls(claude)[0]["argv"][0] == "-p" and calls(codex)[0]["argv"][:2] == ["exec",
                                                                                    "--json"]
    assert all("connectivity check" in c["stdin"] for c in calls(claude) + calls(codex)
               + calls(gemini))


def test_init_with_one_working_cli_writes_nothing(tmp_path):
    bindir = tmp_path / "bin"
    fake_claude(bindir / "claude")
    stale_gemini(bindir / "gemini")
    r = run_init(tmp_path, bindir)
    assert r.returncode == 1, r.stderr
    assert r.stdout == ""
    assert "error: found 1 working CLI(s); a debate needs two" in r.stderr
    assert "nothing was written" in r.stderr
    assert not (tmp_path / "xdg").exists()


def test_init_with_no_cli_at_all(tmp_path):
    r = run_init(tmp_path, tmp_path / "bin")
    assert r.returncode == 1, r.stderr
    assert r.stderr.count("not found on PATH or in the usual install dirs") == 5
    assert not (tmp_path / "xdg").exists()


def test_init_backs_up_the_previous_config_unless_forced(tmp_path):
    bindir = tmp_path / "bin"
    fake_claude(bindir / "claude")
    fake_codex(bindir / "codex")
    target = config_file(tmp_path)
    target.parent.mkdir(parents=True)
    mine = write_config(target, [sim("a"), sim("b")]).read_text()
    r = run_init(tmp_path, bindir)
    assert r.returncode == 0, r.stderr
    [backup] = target.parent.glob("config.yaml.bak-*")
    assert backup.read_text() == mine
    assert re.fullmatch(r"config\.yaml\.bak-\d{8}T\d{6}Z", backup.name)
    assert f"backed up the previous config to {backup}" in r.stderr
    written = target.read_text()
    r = run_init(tmp_path, bindir, "--force")
    assert r.returncode == 0, r.stderr
    assert list(target.parent.glob("config.yaml.bak-*")) == [backup]
    assert backup.read_text() == mine  # not replaced by a same-second backup either
    assert "backed up" not in r.stderr and target.read_text() == written


def test_init_replaces_a_broken_user_config(tmp_path):
    bindir = tmp_path / "bin"
    fake_claude(bindir / "claude")
    fake_codex(bindir / "codex")
    target = config_file(tmp_path)
    target.parent.mkdir(parents=True)
    target.write_text("participants: [\n")
    r = run_init(tmp_path, bindir)
    assert r.returncode == 0, r.stderr
    assert [p.read_text() for p in target.parent.glob("config.yaml.bak-*")] == [
        "participants: [\n"]


# --- every CLI invocation runs outside the user's repository ------------------------------

def repo_sentinel(path: Path, repo: Path, version: str, capture: str) -> Path:
    """A fake CLI that refuses to work inside ``repo``: when its working directory is inside
    it, or git finds any repository from there, it fails (``--version`` included) and says
    where it was. Otherwise it behaves like ``fake_cli``."""
    git = shutil.which("git")
    body = f'''#!{sys.executable}
import os, pathlib, subprocess, sys
repo, here = {str(repo.resolve())!r}, os.path.realpath(os.getcwd())
found = subprocess.run([{git!r}, "rev-parse", "--absolute-git-dir"], capture_output=True,
                       text=True)
if here == repo or here.startswith(repo + os.sep) or found.returncode == 0:
    sys.stderr.write(f"Error: run inside a repository: cwd {{here}}, git found "
                     f"{{found.stdout.strip()}}\\n")
    sys.exit(1)
if "--version" in sys.argv:
    print({version!r})
    sys.exit(0)
sys.stdin.read()
sys.stdout.write(pathlib.Path({str(CAPTURES / capture)!r}).read_text())
'''
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)
    return path


def git_repo(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_the_version_probe_of_a_debate_runs_outside_the_repository(home, tmp_path):
    """The probe's output is kept in the debate's raw/versions (inside the repository when
    the debate runs there); the probe itself runs elsewhere."""
    git_repo(home)
    claude = repo_sentinel(tmp_path / "bin" / "claude", home, "2.1.197 (Claude Code)",
                           "claude/success.stdout")
    cfg = write_config(home / "c.yaml", [{"adapter": "claude", "bin": str(claude)}, sim("b")],
                       rounds=0)
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    folder = next((home / ".debate").glob("debate-*"))
    [turn] = [e.data for e in ledger.load(folder / "events.jsonl")
              if e.type == "turn_completed" and e.data["role"] == "claude"]
    assert turn["ok"] and turn["cli_version"] == "2.1.197", turn
    [raw] = (folder / "raw" / "versions").glob("claude-*.stdout")
    assert raw.read_text() == "2.1.197 (Claude Code)\n"


def test_doctor_runs_probe_and_canary_outside_the_repository(home, tmp_path):
    """Even with GIT_DIR exported by the user, the canary and its probe find no repository."""
    git_repo(home)
    claude = repo_sentinel(tmp_path / "bin" / "claude", home, "2.1.197 (Claude Code)",
                           "claude/success.stdout")
    cfg = write_config(home / "c.yaml", [{"adapter": "claude", "bin": str(claude)}, sim("b")])
    r = invoke("--doctor", "--config", str(cfg), cwd=home,
                env={"GIT_DIR": str(home / ".git"), "GIT_WORK_TREE": str(home)})
    assert r.returncode == 0, r.stderr
    assert "✓ claude (Anthropic, claude 2.1.197): ok in" in r.stderr


def test_init_runs_probes_and_canaries_outside_the_repository(tmp_path):
    repo = git_repo(tmp_path)
    bindir = tmp_path / "bin"
    repo_sentinel(bindir / "claude", repo, "2.1.197 (Claude Code)", "claude/success.stdout")
    repo_sentinel(bindir / "codex", repo, "codex-cli 0.171.0", "codex/success.stdout")
    r = run_init(tmp_path, bindir, env={"GIT_DIR": str(repo / ".git")})
    assert r.returncode == 0, r.stderr
    got = {n: (m, rest) for m, n, rest in lines(r.stderr)}
    assert got["claude"][0] == "✓" and got["codex"][0] == "✓", r.stderr
    assert "(Anthropic, claude 2.1.197)" in r.stderr and "(OpenAI, codex 0.171.0)" in r.stderr


# --- a CLI that can only retry is reported within seconds --------------------------------

def reconnecting_codex(path: Path) -> Path:
    """codex with no network, as recorded: its events up to "Reconnecting... waiting for
    network", after which it waits forever (the real one never stops by itself)."""
    body = f'''#!{sys.executable}
import pathlib, sys, time
if "--version" in sys.argv:
    print("codex-cli 0.171.0")
    sys.exit(0)
sys.stdin.read()
sys.stdout.write(pathlib.Path({str(CAPTURES / "codex" / "no_network.stdout")!r}).read_text())
sys.stdout.flush()
while True:
    time.sleep(3600)
'''
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)
    return path


def running(marker: str) -> list[int]:
    """Live processes whose command line (arguments joined by spaces, plus a trailing space)
    contains ``marker``."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and marker.encode() in cmdline:
            found.append(int(proc.name))
    return found


def test_doctor_reports_a_cli_that_only_reconnects_within_seconds(home, tmp_path):
    codex = reconnecting_codex(tmp_path / "offline" / "codex")
    cfg = write_config(home / "c.yaml", [{"adapter": "codex", "bin": str(codex)}, sim("b")])
    started = time.monotonic()
    r = invoke("--doctor", "--config", str(cfg), cwd=home)  # canary timeout 90 s
    seconds = time.monotonic() - started
    assert r.returncode == 1, r.stderr
    got = {n: (m, rest) for m, n, rest in lines(r.stderr)}
    mark, rest = got["codex"]
    assert mark == "✗" and rest.startswith("api_error: codex cannot reach its API and only "
                                           "retries"), r.stderr
    assert "codex last said: Reconnecting... waiting for network" in rest
    assert got["b"][0] == "✓"
    assert seconds < 30, r.stderr
    assert running(str(tmp_path / "offline")) == [], "the reconnecting CLI outlived the doctor"


# --- a lineup without a judge ------------------------------------------------------------

def test_doctor_checks_a_lineup_without_a_judge(home):
    path = home / "alone.yaml"
    path.write_text(yaml.safe_dump({"participants": [sim("a"), sim("b")]}))
    r = invoke("--doctor", "--config", str(path), cwd=home)
    assert r.returncode == 0, r.stderr
    assert [(m, n) for m, n, _ in lines(r.stderr)] == [("✓", "a"), ("✓", "b")]
    assert "all 2 CLIs healthy" in r.stderr


# --- Ctrl-C ------------------------------------------------------------------------------

@pytest.mark.process
def test_ctrl_c_ends_every_canary_at_once(home):
    """The canaries run in sessions of their own, out of reach of the terminal's Ctrl-C: the
    doctor must end them itself instead of waiting out their timeout."""
    tag = uuid.uuid4().hex  # in the hung canaries' command lines: this test's, no other's
    cfg = write_config(home / "c.yaml", [
        sim("a"), {**sim("stuck", DISPUTATIO_SIM_HANG=1), "model": f"stuck-{tag}"},
    ], judge={**sim("judge", DISPUTATIO_SIM_HANG=1), "model": f"judge-{tag}"})
    hung = (f"simulated.py stuck-{tag} ", f"simulated.py judge-{tag} ")
    proc = subprocess.Popen([sys.executable, "-m", "disputatio", "--doctor", "--config",
                             str(cfg)], cwd=home, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not all(running(m) for m in hung):
            assert time.monotonic() < deadline and proc.poll() is None, "no canary started"
            time.sleep(0.05)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 10
    assert out == "" and "Traceback" not in err
    # only canaries that finished by themselves are reported ("a", if it was fast enough)
    checked = [n for _, n, _ in lines(err)]
    assert set(checked) <= {"a"}, err
    assert err.splitlines()[-1] == f"interrupted: {len(checked)} of 3 CLIs checked", err
    assert not any(running(m) for m in hung), "a canary outlived the doctor"


def test_each_command_and_each_name_gets_its_own_canary(home):
    """Two ``command`` entries are two CLIs (their argv differs), and names that a file name
    cannot tell apart ("x/y", "x_y", "..") must not share a canary's directory or raw files:
    each health line is that CLI's own answer."""
    def command(name: str, script: str) -> dict:
        return {"adapter": "command", "name": name,
                "argv": ["sh", "-c", f"cat >/dev/null; {script}"]}

    cfg = write_config(home / "c.yaml", [
        command("x/y", "sleep 0.5; echo answered"),
        command("x_y", "echo broken >&2; exit 3"),
        command("..", "test -z \"$(ls -A)\" || { echo crowded >&2; exit 4; }; echo alone"),
    ], judge=command("judge", "echo ruled"))
    r = invoke("--doctor", "--config", str(cfg), cwd=home)
    got = {n: (m, rest) for m, n, rest in lines(r.stderr)}
    assert sorted(got) == ["..", "judge", "x/y", "x_y"], r.stderr
    assert got["x_y"] == ("✗", "api_error: broken"), r.stderr
    assert got["x/y"][0] == got[".."][0] == got["judge"][0] == "✓", r.stderr
    assert r.returncode == 1 and "1 of 4 CLIs failed" in r.stderr, r.stderr
