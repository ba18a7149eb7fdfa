"""The product as a user types it, with real simulated participants: the command line's own
``main`` in this process, and a separate process where the process is what is tested (the
entry point's usage errors, signals, kill -9)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from disputatio import ledger
from support import invoke, one_path, run_cli, sim, write_config
from support.box import events as debate_events
from support.procs import MARKER_VAR, marked_processes, wait_for

# two participants and a judge who asks the user before ruling: a debate that waits for
# ``continue``
NEEDS_INPUT = {"participants": [sim("a"), sim("b")], "rounds": 0,
               "judge": {"adapter": "simulated", "name": "judge", "model": "judge",
                         "env": {"DISPUTATIO_SIM_STATUS": "needs_input"}}}


@pytest.mark.process
def test_demo_produces_every_artifact(home):
    r = run_cli("--demo", "Should we rewrite the backend in Rust?", cwd=home)
    assert r.returncode == 0, r.stderr
    report = one_path(r.stdout)
    assert report.name == "final-report.md" and report.is_file()
    folder = report.parent
    assert folder.parent == home / ".debate"
    assert (home / ".debate" / ".gitignore").read_text() == "*\n"
    for name in ("debate.md", "respondeo.md", "debate.json", "events.jsonl"):
        assert (folder / name).is_file(), name
    assert "simulated participant — no model was called" in report.read_text()
    assert (folder / "respondeo.md").read_text().startswith("# Respondeo\n\n**Verdict: RESOLVED**")
    data = json.loads((folder / "debate.json").read_text())
    assert data["status"] == "resolved" and data["verdict"] == "RESOLVED"
    assert [p["name"] for p in data["participants"]] == ["advocate", "skeptic", "pragmatist"]
    assert len(data["turns"]) == 3 + 3 + 1 + 1
    debate_md = (folder / "debate.md").read_text()
    assert debate_md.index("Proposal — advocate") < debate_md.index("Proposal — skeptic")
    assert "Reaction, round 1 — pragmatist" in debate_md
    raw = sorted(p.name for p in (folder / "raw").iterdir())
    assert any(n.endswith("-proposal-advocate.stdout") for n in raw)
    assert any(n.endswith("-respondeo-1.stdout") for n in raw)
    assert ledger.verify(folder / "events.jsonl")[0]


def test_help_lists_every_command_and_each_command_its_flags(home):
    r = invoke("--help", cwd=home)
    assert r.returncode == 0
    for word in ("run", "continue", "finalize", "resume", "verify", "doctor", "init",
                 "protocols", "--version", "--continue", "--finalize", "--resume", "--verify",
                 "--doctor", "--init"):
        assert word in r.stdout, word
    for command, flags in (
            ("run", ("--demo", "--repo", "--rounds", "--config", "--file", "--timeout",
                     "--budget", "--quiet", "--include-uncommitted", "--protocol", "--fence",
                     "--sign", "--max-parallel")),
            ("continue", ("--debate", "--timeout", "--sign", "--fence", "--quiet")),
            ("verify", ("--debate", "--allowed-signers")),
            ("doctor", ("--config", "--demo", "--timeout", "--fence")),
            ("init", ("--force", "--timeout"))):
        r = invoke(command, "--help", cwd=home)
        assert r.returncode == 0, command
        for flag in flags:
            assert flag in r.stdout, (command, flag)


def test_version(home):
    from disputatio import __version__

    r = invoke("--version", cwd=home)
    assert r.returncode == 0 and r.stdout.strip() == f"disputatio {__version__}"


def test_config_error_is_one_line_exit_2(home):
    cfg = home / "bad.yaml"
    cfg.write_text("rounds: 1\nparticipants:\n  - adapter: simulated\n    nmae: x\n"
                   "  - adapter: simulated\njudge: {adapter: simulated}\n")
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.strip() == (f"error: {cfg}:4: unknown key 'participants.0.nmae' "
                                "(did you mean 'name'?)")
    assert not (home / ".debate").exists()


def test_missing_config_and_missing_quaestio_exit_2(home):
    r = invoke("q", "--config", "nope.yaml", cwd=home)
    assert r.returncode == 2 and "nope.yaml: config file not found" in r.stderr
    r = invoke(cwd=home)
    assert r.returncode == 2 and "no quaestio" in r.stderr
    assert "Traceback" not in r.stderr


def test_file_quaestio(home):
    (home / "task.md").write_text("Is the cache safe?\nDetails follow.")
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b")], rounds=0)
    r = invoke("--file", "task.md", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    events = ledger.load(one_path(r.stdout).parent / "events.jsonl")
    assert events[0].data["quaestio"].startswith("Is the cache safe?")
    assert events[0].data["rounds"] == 0


def test_flags_override_config(home):
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b")], rounds=3, timeout_minutes=5)
    r = invoke("q", "--config", str(cfg), "--rounds", "0", "--timeout", "0.5", cwd=home)
    assert r.returncode == 0, r.stderr
    started = ledger.load(one_path(r.stdout).parent / "events.jsonl")[0].data
    assert started["rounds"] == 0 and started["timeout_s"] == 30


def test_abort_with_fewer_than_two_proposals(home):
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b", DISPUTATIO_SIM_FAIL=1),
                                         sim("c", DISPUTATIO_SIM_FAIL=1)])
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 1
    path = one_path(r.stdout)
    assert path.name == "debate.md"
    text = path.read_text()
    assert "Degraded debate" in text and "b failed (api_error) in proposal" in text
    assert "only 1 of 3 proposals succeeded" in r.stderr
    data = json.loads((path.parent / "debate.json").read_text())
    assert data["status"] == "aborted" and data["totals"]["failed"] == 2


def test_failed_participant_reaches_others_as_no_contribution(home):
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b"), sim("c", DISPUTATIO_SIM_FAIL=1)])
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    raw = one_path(r.stdout).parent / "raw"
    prompt = next(raw.glob("*-reaction-1-a.prompt.md")).read_text()
    assert "### Proposal — Participant C\n\n(no contribution this turn)" in prompt
    assert "simulated failure" not in prompt


def test_needs_input_continue_resolved_finalize(home):
    judge = {"adapter": "simulated", "name": "judge", "model": "judge",
             "env": {"DISPUTATIO_SIM_STATUS": "needs_input"}}
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b")], judge=judge, rounds=1)
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    respondeo = one_path(r.stdout)
    assert respondeo.name == "respondeo.md"
    assert "**Verdict: NEEDS_INPUT**" in respondeo.read_text()
    assert "1. What matters more here" in respondeo.read_text()
    folder = respondeo.parent
    assert not (folder / "final-report.md").exists()

    r = invoke("--finalize", cwd=home)
    assert r.returncode == 2 and "cannot finalize" in r.stderr

    r = invoke("--continue", "Speed matters; no deadline.", cwd=home)
    assert r.returncode == 0, r.stderr
    assert one_path(r.stdout) == folder / "final-report.md"
    second = (folder / "respondeo-2.md").read_text()
    assert second.startswith("# Respondeo 2\n\n**Verdict: RESOLVED**") and "Speed matters" in second
    assert "Speed matters" in (folder / "debate.md").read_text()

    r = invoke("--continue", "more", cwd=home)
    assert r.returncode == 2 and "already resolved" in r.stderr

    before = len(ledger.load(folder / "events.jsonl"))
    r = invoke("--finalize", "--debate", str(folder), cwd=home)
    assert r.returncode == 0, r.stderr
    events = ledger.load(folder / "events.jsonl")[before:]
    assert [e.data["turn_id"] for e in events if e.type == "turn_completed"] == ["redactio-2.1"]


def test_unclear_status_is_not_resolved(home):
    judge = {"adapter": "simulated", "name": "judge", "model": "judge",
             "env": {"DISPUTATIO_SIM_STATUS": "garbled"}}
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b")], judge=judge, rounds=0)
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0
    assert one_path(r.stdout).name == "respondeo.md"
    folder = one_path(r.stdout).parent
    data = json.loads((folder / "debate.json").read_text())
    assert data["status"] == "unclear" and data["verdict"] == "UNCLEAR"
    # its answer began "STATUS: RESOLVED": a sentence is never the verdict. Asked again once,
    # with the reason, under a new turn id; then unclear
    assert [t["turn_id"] for t in data["turns"] if t["phase"] == "respondeo"] == \
        ["respondeo-1", "respondeo-1/retry"]
    again = next((folder / "raw").glob("*-respondeo-1-retry.prompt.md")).read_text()
    assert "## Your previous answer could not be read" in again
    assert "no fenced ```json block was found" in again
    assert data["judgment"]["error"] and data["findings"] == []


def test_verify_ok_and_detects_a_one_byte_change(home, finished):
    folder = finished("--demo")
    r = invoke("--verify", cwd=home)
    assert r.returncode == 0 and r.stderr.strip().startswith("ok ") and r.stdout == ""
    path = folder / "events.jsonl"
    data = bytearray(path.read_bytes())
    pos = data.index(b"skeptic", len(data) // 2)
    data[pos] = ord("S")
    path.write_bytes(bytes(data))
    r = invoke("--verify", "--debate", str(folder), cwd=home)
    assert r.returncode == 1
    assert "seq " in r.stderr and "does not match" in r.stderr


def _start(home: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "disputatio", *args], cwd=home,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env=os.environ.copy())


def _completed(events, phase: str) -> set[str]:
    return {e.data["role"] for e in events if e.type == "turn_completed"
            and e.data["phase"] == phase}


@pytest.mark.process
def test_resume_after_kill_9_reruns_only_unfinished_turns(home):
    mark = uuid.uuid4().hex
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b"),
                                         sim("slow", DISPUTATIO_SIM_LATENCY=2,
                                             **{MARKER_VAR: mark})], rounds=1)
    proc = _start(home, "q", "--config", str(cfg))
    wait_for(lambda: _completed(debate_events(home), "proposal") >= {"a", "b"})
    assert marked_processes(mark) != []   # slow's agent is still at work
    proc.kill()
    proc.wait()
    assert "slow" not in _completed(debate_events(home), "proposal")
    # the kernel kills the agent when disputatio dies; its exit is asynchronous, so allow the
    # kernel a bounded moment to finish it
    wait_for(lambda: marked_processes(mark) == [], timeout=5)
    folder = next((home / ".debate").glob("debate-*"))
    r = run_cli("--resume", "--debate", str(folder), cwd=home, timeout=120)
    assert r.returncode == 0, r.stderr
    events = ledger.load(folder / "events.jsonl")
    starts = [e.data["turn_id"] for e in events if e.type == "turn_started"]
    assert starts.count("proposal/a") == 1 and starts.count("proposal/b") == 1
    assert starts.count("proposal/slow") == 2
    assert one_path(r.stdout).name == "final-report.md"
    assert ledger.verify(folder / "events.jsonl")[0]


@pytest.mark.process
def test_sigint_ends_agents_and_exits_130_then_resume_finishes(home):
    mark = uuid.uuid4().hex
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b", DISPUTATIO_SIM_HANG=1,
                                                     **{MARKER_VAR: mark})], rounds=0)
    proc = _start(home, "q", "--config", str(cfg))
    wait_for(lambda: "a" in _completed(debate_events(home), "proposal"))
    wait_for(lambda: marked_processes(mark) != [])   # b's agent is running, hung
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 10
    assert "disputatio resume --debate" in err
    events = debate_events(home)
    assert events[-1].type == "interrupted"
    assert any(e.type == "turn_interrupted" and e.data["role"] == "b" for e in events)
    assert marked_processes(mark) == [], "a simulated agent survived the interruption"


def test_secrets_reach_the_agent_but_never_the_disk(home):
    """An env value or a credential flag is passed to the CLI as given, and recorded nowhere."""
    agent = home / "echo_key.sh"
    agent.write_text("#!/bin/sh\ncat >/dev/null\necho \"key=$MY_API_TOKEN url=$DATABASE_URL\"\n")
    agent.chmod(0o755)
    secret, url = "sk-live-0123456789", "postgres://u:hunter2@db/x"
    participant = {"adapter": "command", "name": "env-echo", "argv": [str(agent)],
                   "env": {"MY_API_TOKEN": secret, "DATABASE_URL": url},
                   "extra_args": ["--api-key", secret, "--token=" + secret]}
    cfg = write_config(home / "d.yaml", [participant, sim("b")], rounds=0)
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    folder = one_path(r.stdout).parent
    echoed = next((folder / "raw").glob("*-proposal-env-echo.stdout")).read_text()
    assert f"key={secret} url={url}" in echoed
    for name in ("events.jsonl", "debate.json"):
        text = (folder / name).read_text()
        assert secret not in text.replace(f"key={secret} url={url}", ""), name
        assert "hunter2" not in text.replace(f"key={secret} url={url}", ""), name
    lineup = folder / "lineup.json"
    assert lineup.stat().st_mode & 0o077 == 0 and secret in lineup.read_text()


def test_a_participant_named_like_the_judge_is_refused(home):
    cfg = write_config(home / "d.yaml", [sim("judge"), sim("b")])
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 2 and "the judge's name 'judge' is also a participant's" in r.stderr


def test_resume_retries_the_judge_after_a_transient_failure(home):
    judge = {"adapter": "simulated", "name": "judge", "model": "judge",
             "env": {"DISPUTATIO_SIM_FAIL_ONCE": str(home / "judge-failed-once")}}
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b")], judge=judge, rounds=0)
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 1 and "the judge gave no ruling" in r.stderr
    folder = one_path(r.stdout).parent
    r = invoke("--resume", cwd=home)
    assert r.returncode == 0, r.stderr
    assert one_path(r.stdout) == folder / "final-report.md"
    starts = [e.data["turn_id"] for e in ledger.load(folder / "events.jsonl")
              if e.type == "turn_started"]
    assert starts.count("respondeo-1") == 2 and starts.count("proposal/a") == 1
    # the record shows the ruling that came, and says what became of the attempt before it
    md = (folder / "debate.md").read_text()
    ruling = md.split("## Respondeo", 1)[1]
    assert "_An earlier attempt: failed (api_error): simulated transient failure._" in ruling
    assert md.count("earlier attempt") == 1


def test_resume_of_a_finished_debate_changes_nothing(home, finished):
    folder = finished("--demo")
    before = (folder / "events.jsonl").read_bytes()
    r = invoke("--resume", cwd=home)
    assert r.returncode == 0 and "nothing to resume" in r.stderr
    assert one_path(r.stdout) == folder / "final-report.md"
    assert (folder / "events.jsonl").read_bytes() == before


def test_continue_refuses_a_tampered_ledger(home, finished):
    folder = finished("q", lineup=NEEDS_INPUT)
    path = folder / "events.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"rounds":0', b'"rounds":1', 1))
    before = path.read_bytes()
    r = invoke("--continue", "answers", cwd=home)
    assert r.returncode == 1 and "does not verify (seq 1" in r.stderr
    assert path.read_bytes() == before


@pytest.mark.process
def test_click_usage_errors_are_one_line_exit_2(home):
    for args in (["--bogus"], ["--rounds", "-1"], ["--timeout", "0"]):
        r = run_cli(*args, cwd=home)
        assert r.returncode == 2, args
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr


def test_options_that_would_be_ignored_are_refused(home):
    for args, said in ((["--demo", "--config", "x.yaml"], "drop --config"),
                       (["--force", "--demo"], "--force cannot be used with a new debate"),
                       (["--verify", "--rounds", "3"], "--rounds cannot be used with --verify"),
                       (["--demo", ""], "the quaestio is empty"),
                       (["--demo", "--rounds", "25"], "--rounds: Input should be less than")):
        r = invoke(*args, cwd=home)
        assert r.returncode == 2 and said in r.stderr, (args, r.stderr)
    assert not (home / ".debate").exists()


def test_a_missing_cli_is_refused_before_anything_starts(home):
    cfg = write_config(home / "d.yaml", [sim("a"), {"adapter": "claude", "name": "c",
                                                    "bin": str(home / "no-such-claude")}])
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 2
    assert r.stderr.strip().startswith("error: c: '") and "not installed" in r.stderr
    assert not (home / ".debate").exists()


@pytest.mark.process
def test_the_next_run_ends_what_a_killed_run_left_running(home):
    marker = f"orphan-{os.getpid()}-{time.monotonic_ns()}"
    agent = home / "forks.sh"
    agent.write_text(f"#!/bin/sh\ncat >/dev/null\nsh -c 'sleep 300; : {marker}' &\n"
                     f"echo started > {home}/forked\nsleep 300\n")
    agent.chmod(0o755)
    cfg = write_config(home / "d.yaml", [{"adapter": "command", "name": "forks",
                                          "argv": [str(agent)]}, sim("b")], rounds=0)
    proc = _start(home, "q", "--config", str(cfg))
    wait_for(lambda: (home / "forked").exists())
    proc.kill()
    proc.wait()

    def orphans():
        out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
        return out.split()

    wait_for(lambda: orphans() != [])   # the grandchild outlived the kill -9 ...
    r = run_cli("--demo", cwd=home)       # ... until the next run of disputatio
    assert r.returncode == 0, r.stderr
    wait_for(lambda: orphans() == [], timeout=5)


def test_verify_catches_a_ledger_cut_short(home, finished):
    folder = finished("--demo")
    path = folder / "events.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-3]))
    r = invoke("--verify", cwd=home)
    assert r.returncode == 1 and "cut short" in r.stderr


def test_a_torn_last_line_is_a_crash_not_tampering(home, finished):
    folder = finished("q", lineup=NEEDS_INPUT)
    with open(folder / "events.jsonl", "ab") as fh:
        fh.write(b'{"seq": 99, "ts": "2026-')   # a crash in the middle of an append
    r = invoke("--verify", cwd=home)
    assert r.returncode == 0 and "torn last line" in r.stderr
    r = invoke("--continue", "answers", cwd=home)
    assert r.returncode == 0, r.stderr
    assert ledger.verify(folder / "events.jsonl")[0]


def test_a_relative_command_runs_from_the_agents_workspace(home):
    tools = home / "tools"
    tools.mkdir()
    agent = tools / "agent.sh"
    agent.write_text("#!/bin/sh\ncat >/dev/null\necho relative-ok\n")
    agent.chmod(0o755)
    cfg = write_config(home / "d.yaml", [{"adapter": "command", "name": "rel",
                                          "argv": ["tools/agent.sh"]}, sim("b")], rounds=0)
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    assert "relative-ok" in (one_path(r.stdout).parent / "debate.md").read_text()


def test_include_uncommitted_without_a_repo_is_refused(home):
    r = invoke("--demo", "--include-uncommitted", cwd=home)
    assert r.returncode == 2 and "needs a repository" in r.stderr


# --- Ctrl-C at start-up --------------------------------------------------------------------
# The process signals itself at a known point before any use case has installed its own
# handlers: while typer builds the command, and while the use case's modules are imported.
# os.kill on our own pid runs the handler at the next bytecode, so the point is exact.
SIGNAL_WHILE_TYPER_BUILDS = """
import os, signal, sys
import typer.main
real = typer.main.get_command
def get_command(app):
    os.kill(os.getpid(), {sig})
    return real(app)
typer.main.get_command = get_command
"""
SIGNAL_WHILE_THE_USE_CASE_LOADS = """
import importlib.abc, os, signal, sys
class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "disputatio.app":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), {sig})
        return None
sys.meta_path.insert(0, Hook())
"""
SIGNAL_WHILE_TYPER_IMPORTS = """
import importlib.abc, os, signal, sys
class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "typer":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), {sig})
        return None
sys.meta_path.insert(0, Hook())
"""
# as the console script and ``python -m disputatio`` start
ENTRY = "from disputatio.entry import main; sys.argv[0] = 'disputatio'; main()"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("where", [SIGNAL_WHILE_TYPER_IMPORTS, SIGNAL_WHILE_TYPER_BUILDS,
                                   SIGNAL_WHILE_THE_USE_CASE_LOADS],
                         ids=["typer-imports", "typer-builds-the-command", "use-case-loads"])
@pytest.mark.process
def test_a_signal_at_start_up_is_one_line_exit_130(home, where, sig):
    script = where.format(sig=int(sig)) + ENTRY
    r = subprocess.run([sys.executable, "-c", script, "--demo", "q"], cwd=home,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stderr, r.stdout) == (130, "error: interrupted\n", "")
    assert not (home / ".debate").exists()


@pytest.mark.parametrize("args", [["--timeout", "inf"], ["--timeout", "nan"],
                                  ["--timeout", "-inf"], ["--budget", "inf"],
                                  ["--budget", "nan"], ["--timeout", "0"],
                                  ["--max-parallel", "0"]])
def test_non_finite_numbers_and_limits_below_one_are_usage_errors(home, args):
    r = invoke("--demo", *args, cwd=home)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    if args[1] in ("inf", "nan", "-inf"):
        assert "must be a finite number" in r.stderr, r.stderr
    assert not (home / ".debate").exists()


def test_misread_yaml_is_refused_before_anything_is_created(home):
    cfg = home / "d.yaml"
    cfg.write_text("rounds: 1\nparticipants:\n  - {adapter: simulated, name: a}\n"
                   "  - {adapter: simulated, name: b}\nparticipants:\n"
                   "  - {adapter: simulated, name: c}\n  - {adapter: simulated, name: d}\n")
    started = time.monotonic()
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert time.monotonic() - started < 10   # the process, interpreter start included
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f"error: {cfg}:5: duplicate key 'participants' (first on line 2); "
                        "YAML would keep only the last\n")
    assert not (home / ".debate").exists()


def test_a_bin_that_is_a_directory_is_named_with_its_line(home):
    cfg = write_config(home / "d.yaml", [{**sim("a"), "bin": str(home)}, sim("b")])
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == f"error: {cfg}:5: participants.0.bin: '{home}' is a directory\n"
    r = invoke("--doctor", "--config", str(cfg), cwd=home)
    assert r.returncode == 2 and "is a directory" in r.stderr
    assert not (home / ".debate").exists()


def test_max_parallel_is_for_a_new_debate_only(home):
    r = invoke("--resume", "--max-parallel", "2", cwd=home)
    assert (r.returncode, r.stderr) == (2, "error: --max-parallel cannot be used with "
                                           "--resume\n")
