"""The write fence with real processes: an agent that runs a "test suite" writing everywhere can
write only its own checkout (and a private /tmp that vanishes); the fence cannot be climbed out
of; killing the group, the parent or the run still ends everything; where no fence can be had,
every artifact says so; and the policy itself (argv order, paths, profile) as pure functions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid
from pathlib import Path

import pytest

from disputatio import ledger
from disputatio.adapters import fence, transport
from disputatio.adapters.base import Invocation
from disputatio.adapters.fence import StateDir
from support import (
    AGENT,
    MARKER_VAR,
    config_file,
    gone,
    invoke,
    kill_survivors,
    make_repo,
    marked_processes,
    run_cli,
    run_init,
    wait_for,
    write_config,
)
from support.captures import FIX
from support.procs import sh

FENCED = True  # tests/conftest.py leaves the fence at its default (auto) for this module
HERE = fence.available()


def needs_fence(test):
    """Agents in the fence, as real processes: the process tier, skipped (saying why) where this
    machine has no fence."""
    skip = pytest.mark.skipif(not HERE.on, reason=f"no write fence here: {HERE.reason}")
    return pytest.mark.process(skip(test))


# A test suite as an agent runs it: it writes wherever tests write and reports each outcome.
SUITE = textwrap.dedent('''\
    import json, os, sys
    from pathlib import Path
    me, token = os.environ["SUITE_NAME"], os.environ["SUITE_TOKEN"]
    world = Path(os.environ["SUITE_WORLD"])
    ck = Path.cwd()
    targets = {
        "home": Path(os.environ["HOME"]) / f"{token}-{me}",
        "tmp": Path("/tmp") / f"{token}-{me}",
        "tmpdir": Path(os.environ.get("TMPDIR", "/tmp")) / f"{token}-{me}-tmpdir",
        "user_repo": world / "repo" / f"{token}-{me}",
        "debate": world / "work" / ".debate" / f"{token}-{me}",
        "other_checkout": ck.parent.parent / os.environ["SUITE_OTHER"] / ck.name / f"{token}-{me}",
    }
    report = {"own_was_dirty": Path("own.txt").exists()}
    for name, path in targets.items():
        try:
            path.write_text("written by a test suite")
            report[name] = "written"
        except OSError as exc:
            report[name] = exc.strerror
    Path("own.txt").write_text("x")
    report["own"] = Path("own.txt").read_text() == "x" and "written"
    print("SUITE " + json.dumps(report, sort_keys=True))
''')


@pytest.fixture
def world(request, tmp_path, monkeypatch):
    """The user's repository, the debate folder, HOME and the workspaces' temp dir, all in one
    base: under /var/tmp (visible, read-only inside the fence) or under /tmp (hidden by the
    private /tmp); both must hold."""
    if request.param == "outside-tmp":
        if not os.access("/var/tmp", os.W_OK):
            pytest.skip("/var/tmp is not writable here")
        base = Path(tempfile.mkdtemp(prefix="disputatio-fence-test-", dir="/var/tmp"))
        request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    else:
        base = tmp_path
    for d in ("work", "home", "tmp", "bin"):
        (base / d).mkdir()
    make_repo(base / "repo")
    (base / "bin" / "suite").write_text(f"#!{sys.executable}\n{SUITE}")
    (base / "bin" / "suite").chmod(0o755)
    return base


def suite(name: str, other: str, world: Path, token: str) -> dict:
    return {"adapter": "command", "name": name, "argv": [str(world / "bin" / "suite")],
            "env": {"SUITE_NAME": name, "SUITE_OTHER": other, "SUITE_WORLD": str(world),
                    "SUITE_TOKEN": token}}


def reports(debate_dir: Path) -> list[dict]:
    out = []
    for e in ledger.load(debate_dir / "events.jsonl"):
        if e.type == "turn_completed" and "SUITE " in (e.data.get("text") or ""):
            out.append(json.loads(e.data["text"].split("SUITE ", 1)[1]))
    return out


@needs_fence
@pytest.mark.parametrize("world", ["outside-tmp", "under-tmp"], indirect=True)
def test_a_test_suite_run_by_an_agent_writes_only_its_own_checkout(world):
    token = f"fence-{uuid.uuid4().hex[:8]}"
    # each names the other's checkout directory: numbered in lineup order
    cfg = write_config(world / "d.yaml", [suite("a", "2", world, token),
                                          suite("b", "1", world, token)], rounds=1)
    marker = uuid.uuid4().hex
    try:
        r = run_cli("Do the tests pass?", "--repo", str(world / "repo"), "--config", str(cfg),
                    "--timeout", "1", "-q", cwd=world / "work",
                    env={"HOME": str(world / "home"), "TMPDIR": str(world / "tmp"),
                         MARKER_VAR: marker})
        assert r.returncode == 0, r.stderr
        assert gone(marker)
    finally:
        kill_survivors(marker)
    assert "no write fence" not in r.stderr
    debate_dir = Path(r.stdout.strip()).parent
    got = reports(debate_dir)
    assert len(got) == 4  # a and b, proposal and reaction: every turn completed
    denied = "Read-only file system"
    for rep in got:
        assert rep["own"] == "written" and rep["own_was_dirty"] is False  # reset between turns
        assert rep["tmp"] == "written" and rep["tmpdir"] == "written"  # the private /tmp
        for where in ("home", "user_repo", "debate", "other_checkout"):
            if world.is_relative_to("/tmp"):  # hidden under the private /tmp: not even there
                assert rep[where] != "written", (where, rep)
            else:
                assert rep[where] == denied, (where, rep)
    leftovers = [p for p in [*world.rglob(f"{token}*"), *Path("/tmp").glob(f"{token}*")]]
    assert leftovers == []
    started = ledger.load(debate_dir / "events.jsonl")[0].data
    assert started["fence"] == HERE.mechanism and "fence_reason" not in started
    assert f"- **Write fence:** {HERE.mechanism}\n" in (debate_dir / "debate.md").read_text()
    assert json.loads((debate_dir / "debate.json").read_text())["fence"] == HERE.mechanism
    assert list((world / "tmp").iterdir()) == []  # private temp dirs removed after each turn


def _only(tmp_path: Path, *names: str) -> str:
    """A PATH holding just these programs (so no bwrap on it)."""
    d = tmp_path / "only-bin"
    d.mkdir()
    for n in names:
        (d / n).symlink_to(shutil.which(n))
    return str(d)


def test_without_bwrap_the_debate_runs_unfenced_and_says_so_everywhere(home, tmp_path):
    r = invoke("Q?", "--demo", "--rounds", "0", "-q", cwd=home,
                env={"PATH": _only(tmp_path, "git")})
    assert r.returncode == 0, r.stderr
    reason = "bwrap (bubblewrap) is not on PATH; install the bubblewrap package"
    assert f"warning: no write fence: {reason};" in r.stderr
    debate_dir = Path(r.stdout.strip()).parent
    started = ledger.load(debate_dir / "events.jsonl")[0].data
    assert (started["fence"], started["fence_reason"]) == ("none", reason)
    assert f"- **Write fence:** none — {reason}\n" in (debate_dir / "debate.md").read_text()
    data = json.loads((debate_dir / "debate.json").read_text())
    assert (data["fence"], data["fence_reason"]) == ("none", reason)


def test_a_bwrap_that_cannot_make_a_sandbox_is_no_fence_and_says_why(home, tmp_path):
    """A kernel or policy refusing user namespaces: bwrap is there, the probe fails."""
    path = _only(tmp_path, "git")
    fake = Path(path) / "bwrap"
    fake.write_text("#!/bin/sh\n[ \"$1\" = --version ] && { echo 'bubblewrap 0.8.0'; exit 0; }\n"
                    "echo 'bwrap: No permissions to create a new namespace' >&2; exit 1\n")
    fake.chmod(0o755)
    r = invoke("Q?", "--demo", "--rounds", "0", "-q", cwd=home, env={"PATH": path})
    assert r.returncode == 0, r.stderr
    reason = ("bwrap cannot make a sandbox here: bwrap: No permissions to create a new "
              "namespace")
    assert f"warning: no write fence: {reason};" in r.stderr
    started = ledger.load(Path(r.stdout.strip()).parent / "events.jsonl")[0].data
    assert (started["fence"], started["fence_reason"]) == ("none", reason)


def test_require_without_bwrap_refuses_before_anything_is_made(home, tmp_path):
    r = invoke("Q?", "--demo", "--fence", "require", cwd=home,
                env={"PATH": _only(tmp_path, "git")})
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("error: the write fence is required but unavailable: bwrap (bubblewrap) "
                        "is not on PATH; install the bubblewrap package\n")
    assert not (home / ".debate").exists()


def test_require_in_the_config_file_is_refused_too(home, tmp_path):
    cfg = write_config(home / "d.yaml", [{"adapter": "simulated", "name": "a"},
                                         {"adapter": "simulated", "name": "b"}], fence="require")
    r = invoke("Q?", "--config", str(cfg), cwd=home, env={"PATH": _only(tmp_path, "git")})
    assert r.returncode == 2 and "the write fence is required but unavailable" in r.stderr
    assert not (home / ".debate").exists()


def test_a_bad_fence_in_the_config_is_a_config_error(home):
    cfg = write_config(home / "d.yaml", [{"adapter": "simulated", "name": "a"},
                                         {"adapter": "simulated", "name": "b"}], fence="always")
    r = invoke("Q?", "--config", str(cfg), cwd=home)
    assert r.returncode == 2 and r.stderr.startswith(f"error: {cfg}:") and "fence" in r.stderr
    assert len(r.stderr.splitlines()) == 1 and not (home / ".debate").exists()


def test_fence_is_refused_where_no_agent_would_run(home):
    r = invoke("--verify", "--fence", "off", cwd=home)
    assert (r.returncode, r.stderr) == (2, "error: --fence cannot be used with --verify\n")


def test_continue_chooses_its_own_fence_and_records_it(home, tmp_path):
    judge = {"adapter": "simulated", "name": "judge", "model": "judge",
             "env": {"DISPUTATIO_SIM_STATUS": "needs_input"}}
    cfg = write_config(home / "d.yaml", [{"adapter": "simulated", "name": "a"},
                                         {"adapter": "simulated", "name": "b"}], judge,
                       rounds=0)
    r = invoke("Q?", "--config", str(cfg), "-q", "--fence", "off", cwd=home)
    assert r.returncode == 0, r.stderr
    events = Path(r.stdout.strip()).parent / "events.jsonl"
    before = events.read_bytes()
    r = invoke("--continue", "yes", "--fence", "require", cwd=home,
                env={"PATH": _only(tmp_path, "git")})
    assert r.returncode == 2 and "the write fence is required but unavailable" in r.stderr
    assert events.read_bytes() == before  # refused before anything was appended
    r = invoke("--continue", "yes", "-q", cwd=home)
    assert r.returncode == 0, r.stderr
    given = [e for e in ledger.load(events) if e.type == "answers_given"]
    assert [e.data.get("fence") for e in given] == [HERE.mechanism if HERE.on else "none"]


def test_fence_off_runs_without_and_records_it(home):
    r = invoke("Q?", "--demo", "--rounds", "0", "-q", "--fence", "off", cwd=home)
    assert (r.returncode, r.stderr) == (0, "")  # the user's choice: recorded, not warned about
    started = ledger.load(Path(r.stdout.strip()).parent / "events.jsonl")[0].data
    assert started["fence"] == "none" and started["fence_reason"].startswith("turned off")


def test_an_unknown_fence_mode_is_one_line_and_exit_2(home):
    r = invoke("Q?", "--demo", "--fence", "maybe", cwd=home)
    assert (r.returncode, r.stderr) == (2, "error: --fence must be auto, require or off, "
                                           "not 'maybe'\n")


# ---------------------------------------------------------------- the transport, fenced


@needs_fence
def test_no_way_out_of_the_fence_even_as_root(tmp_path, env):
    """Remounting, a new mount namespace and a nested bubblewrap (codex's own sandbox has this
    shape) all stay inside: the mounts are locked read-only."""
    (tmp_path / "ck").mkdir()
    target = Path("/var/tmp") / f"disputatio-escape-{uuid.uuid4().hex[:8]}"  # outside /tmp
    script = f"""
        mount -o remount,bind,rw / 2>/dev/null; touch {target} 2>/dev/null && echo ESCAPED-remount
        unshare -Urm sh -c 'mount -o remount,bind,rw / && touch {target}' 2>/dev/null \
            && echo ESCAPED-unshare
        bwrap --unshare-user --bind / / -- sh -c \
            'mount -o remount,bind,rw / 2>/dev/null; touch {target}' 2>/dev/null \
            && echo ESCAPED-bwrap
        bwrap --unshare-user --unshare-pid --ro-bind / / --dev /dev -- true && echo nested-ok
    """
    try:
        cap = sh(tmp_path, script, env)
        assert cap.exit_code == 0, cap.read_stderr()
        assert "ESCAPED" not in cap.read_stdout() and not target.exists()
    finally:
        target.unlink(missing_ok=True)
    assert "nested-ok" in cap.read_stdout()


@needs_fence
def test_a_state_dir_is_writable_but_never_what_it_would_cover(tmp_path, env):
    state, ck = tmp_path / "state", tmp_path / "ck"
    repo, debate = state / "repo", state / ".debate"
    for d in (repo, debate, ck):
        d.mkdir(parents=True)
    cap = sh(tmp_path, "for p in $FAKE_HOME/ok $FAKE_HOME/repo/no $FAKE_HOME/.debate/no "
                       "$FAKE_HOME/new/ok; do (mkdir -p $(dirname $p) && touch $p) 2>/dev/null "
                       "&& echo wrote $p; done",
             {**env, "FAKE_HOME": str(state)}, state=[StateDir("FAKE_HOME")],
             protect=[repo, debate])
    assert cap.read_stdout().split() == ["wrote", f"{state}/ok", "wrote", f"{state}/new/ok"]
    assert sorted(p.name for p in state.iterdir()) == [".debate", "new", "ok", "repo"]
    assert not any(repo.iterdir()) and not any(debate.iterdir())


@needs_fence
def test_a_missing_state_dir_is_created_then_bound(tmp_path, env):
    (tmp_path / "ck").mkdir()
    fresh = tmp_path / "fresh-home" / ".cli"
    cap = sh(tmp_path, f"touch {fresh}/login.json", env,
             state=[StateDir(None, (str(fresh),))])
    assert cap.exit_code == 0, cap.read_stderr()
    assert (fresh / "login.json").is_file()


@needs_fence
def test_the_cwd_is_writable_only_when_granted(tmp_path, env):
    (tmp_path / "ck").mkdir()
    cap = sh(tmp_path, "touch here", env, writable=[])
    assert cap.exit_code != 0 and "Read-only file system" in cap.read_stderr()
    assert not (tmp_path / "ck" / "here").exists()


@needs_fence
def test_a_timeout_ends_the_whole_fenced_tree(tmp_path, env, monkeypatch):
    monkeypatch.setattr(transport, "TERM_GRACE_S", 0.5)
    inv = Invocation(argv=AGENT, env={"FAKE_TREE": "1", "FAKE_HANG": "1",
                                      "FAKE_PID_DIR": str(tmp_path)})
    cap = transport.run(inv, tmp_path, 1.5, tmp_path / "raw", "turn", env)
    assert cap.timed_out
    assert {p.name.split("-")[0] for p in tmp_path.iterdir() if "-" in p.name} == \
        {"child", "grandchild"}  # the tree was up, inside the fence, when the timeout hit
    assert gone(env[MARKER_VAR])


@needs_fence
def test_a_fenced_agent_keeps_its_grace_period_on_timeout(tmp_path, env):
    """SIGTERM goes to the agent, not to bwrap, which would die at once and take the agent
    with it before its handler could finish."""
    (tmp_path / "ck").mkdir()
    cap = sh(tmp_path, "trap 'sleep 0.3; echo bye > termed; exit 0' TERM; "
                       "while :; do sleep 0.05; done", env, timeout_s=1.0)
    assert cap.timed_out
    assert (tmp_path / "ck" / "termed").read_text() == "bye\n"


@needs_fence
def test_a_fenced_agent_killed_by_a_signal_is_reported_as_such(tmp_path, env):
    (tmp_path / "ck").mkdir()
    cap = sh(tmp_path, "kill -KILL $$", env)
    assert (cap.signal, cap.exit_code) == (9, None)


@needs_fence
@pytest.mark.parametrize("code", [145, 147, 173, 244, 130])
def test_a_fenced_cli_exit_code_above_128_stays_an_exit_code(tmp_path, env, code):
    """gemini exits with the HTTP status mod 256 (401 → 145) and 130 when cancelled: under bwrap
    such a code must not be read as a death by signal."""
    (tmp_path / "ck").mkdir()
    cap = sh(tmp_path, f"exit {code}", env)
    assert (cap.signal, cap.exit_code) == (None, code)


@needs_fence
def test_a_run_killed_with_9_loses_its_whole_fenced_tree(tmp_path, env):
    """PR_SET_PDEATHSIG ends bwrap, bwrap's --die-with-parent ends the pid namespace's init,
    and the kernel ends everything else in it: the grandchild too, with no sweep needed (pids
    written inside are the namespace's own, so the tree is followed by its marker)."""
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from disputatio.adapters import transport
        from disputatio.adapters.base import Invocation
        inv = Invocation(argv={AGENT!r}, env={{"FAKE_TREE": "1", "FAKE_HANG": "1",
                                               "FAKE_PID_DIR": {str(tmp_path)!r}}})
        transport.run(inv, Path({str(tmp_path)!r}), 60, Path({str(tmp_path / "raw")!r}), "t")
    """)
    runner = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        wait_for(lambda: len(list(tmp_path.glob("grandchild-*"))) == 1, 30, "fenced tree up")
        tree = marked_processes(env[MARKER_VAR])
        assert any("bwrap" in cmd for _, cmd in tree)
        assert sum("--grandchild" in cmd for _, cmd in tree) == 1
        runner.kill()
        runner.wait()
        assert gone(env[MARKER_VAR])
    finally:
        runner.kill()


@needs_fence
def test_scratch_files_stay_readable_and_writable_inside_the_debate_folder(tmp_path, env):
    """A prompt placed as a file ({scratch}) lives in the debate's raw/, which is otherwise
    read-only to the agent."""
    (tmp_path / "ck").mkdir()
    inv = Invocation(argv=("sh", "-c", "cat {scratch}/prompt.md && echo more >> "
                                       "{scratch}/prompt.md && touch {scratch}/../stolen"),
                     files={"prompt.md": b"the prompt\n"})
    cap = transport.run(inv, tmp_path / "ck", 30, tmp_path / "debate" / "raw", "turn", env,
                        protect=[tmp_path / "debate"])
    assert cap.read_stdout() == "the prompt\n"
    assert (tmp_path / "debate" / "raw" / "turn.files" / "prompt.md").read_text() == \
        "the prompt\nmore\n"
    assert not (tmp_path / "debate" / "raw" / "stolen").exists()  # beside it: not for the agent


@needs_fence
def test_a_script_named_on_the_command_line_stays_runnable_under_the_private_tmp(tmp_path, env):
    """A ``command`` participant's script in a temp dir, reached through a symlink."""
    (tmp_path / "ck").mkdir()
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "s.py").write_text("print('ran')\n")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    inv = Invocation(argv=(sys.executable, str(tmp_path / "link" / "s.py")))
    cap = transport.run(inv, tmp_path / "ck", 30, tmp_path / "raw", "turn", env)
    assert (cap.exit_code, cap.read_stdout()) == (0, "ran\n"), cap.read_stderr()


def test_a_missing_binary_is_still_not_installed_under_the_fence(tmp_path, env):
    (tmp_path / "ck").mkdir()
    inv = Invocation(argv=(str(tmp_path / "nope"),))
    cap = transport.run(inv, tmp_path / "ck", 5, tmp_path / "raw", "turn", env)
    assert cap.spawn_error == f"{tmp_path / 'nope'}: No such file or directory"


# ---------------------------------------------------------------- --doctor's fence canary


@pytest.fixture
def var_home(monkeypatch):
    """A HOME outside /tmp, so the canary meets a read-only directory, not a hidden one."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    base = Path(tempfile.mkdtemp(prefix="disputatio-fence-test-", dir="/var/tmp"))
    monkeypatch.setenv("HOME", str(base / "home"))
    (base / "home").mkdir()
    yield base
    shutil.rmtree(base, ignore_errors=True)


@needs_fence
def test_the_doctor_canary_finds_the_fence_holding_around_a_cli(var_home, tmp_path):
    from disputatio import doctor
    from disputatio.config import Participant

    (tmp_path / "w").mkdir()
    p = Participant(adapter="codex", env={"CODEX_HOME": str(var_home / "codex-home")})
    assert doctor.fence_canary(p, tmp_path / "w", tmp_path / "raw", "c") == doctor.FENCE_HOLDS
    assert list((var_home / "home").iterdir()) == []
    assert (var_home / "codex-home").is_dir()  # created, bound, and proven writable


@needs_fence
def test_the_doctor_canary_reports_a_state_dir_that_opens_the_home(var_home, tmp_path):
    from disputatio import doctor
    from disputatio.config import Participant

    (tmp_path / "w").mkdir()
    p = Participant(adapter="codex", env={"CODEX_HOME": str(var_home / "home")})
    got = doctor.fence_canary(p, tmp_path / "w", tmp_path / "raw", "c")
    assert got == f"fence broken: a write reached {var_home / 'home'}"
    assert list((var_home / "home").iterdir()) == []  # and the canary's file is gone again


def test_the_doctor_says_which_fence_it_checked(home):
    r = invoke("--doctor", "--demo", cwd=home)
    assert r.returncode == 0, r.stderr
    if HERE.on:
        assert f"write fence: {HERE.mechanism})" in r.stderr
        assert r.stderr.count(" · fence holds\n") == 4
    else:
        assert f"no write fence: {HERE.reason})" in r.stderr


def _printing_cli(path: Path, version: str, capture: str) -> None:
    """A stand-in for a real CLI that writes nothing anywhere: a version, or a real capture."""
    path.write_text(f"#!{sys.executable}\nimport sys\nsys.stdin.read()\n"
                    f"print({version!r}) if '--version' in sys.argv else "
                    f"sys.stdout.write(open({str(FIX / capture)!r}).read())\n")
    path.chmod(0o755)


@pytest.mark.parametrize("with_bwrap", [True, False], ids=["fence", "no-fence"])
def test_init_requires_the_fence_once_it_held_around_every_cli(tmp_path, with_bwrap):
    if with_bwrap and not HERE.on:
        pytest.skip(f"no write fence here: {HERE.reason}")
    import yaml

    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("sh", "touch", "rm", *(["bwrap"] if with_bwrap else [])):
        (bindir / tool).symlink_to(shutil.which(tool))
    _printing_cli(bindir / "claude", "2.1.197 (Claude Code)", "claude/success.stdout")
    _printing_cli(bindir / "codex", "codex-cli 0.171.0", "codex/success.stdout")
    r = run_init(tmp_path, bindir)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count(" · fence holds\n") == (2 if with_bwrap else 0)
    data = yaml.safe_load(config_file(tmp_path).read_text())
    assert data["fence"] == ("require" if with_bwrap else "auto")


@needs_fence
def test_a_program_installed_under_tmp_still_finds_its_own_files(tmp_path, env):
    """A clone or a venv in /tmp (a CI checkout, say): the agent's /tmp is private, but the
    installation its program comes from stays readable, or a simulated agent could not even
    import disputatio."""
    top = Path("/tmp") / f"fence-install-{uuid.uuid4().hex}"
    try:
        (top / "bin").mkdir(parents=True)
        (top / "lib").mkdir()
        (top / "lib" / "data").write_text("from its own lib\n")
        tool = top / "bin" / "tool"
        tool.write_text(f"#!/bin/sh\ncat {top}/lib/data\n")
        tool.chmod(0o755)
        (tmp_path / "ck").mkdir()
        cap = transport.run(Invocation(argv=(str(tool),)), tmp_path / "ck", 30,
                            tmp_path / "raw", "turn", env)
        assert cap.exit_code == 0, cap.read_stderr()
        assert cap.read_stdout() == "from its own lib\n"
    finally:
        shutil.rmtree(top, ignore_errors=True)


@needs_fence
def test_an_agent_cannot_read_the_other_participants_env_values(home, tmp_path):
    """lineup.json and the user config hold every participant's env values (logins, keys);
    each agent is given only its own, and reads those files as empty."""
    secret = "sk-other-participant-0123456789"
    spy = {"adapter": "command", "name": "spy",
           "argv": ["sh", "-c", 'cat >/dev/null; cat "$LOOK"/.debate/debate-*/lineup.json '
                    '"$XDG_CONFIG_HOME"/disputatio/config.yaml; echo "read: $(cat '
                    '"$LOOK"/.debate/debate-*/lineup.json | wc -c) bytes"'],
           "env": {"LOOK": str(home)}}
    victim = {"adapter": "simulated", "name": "victim", "model": "victim",
              "env": {"VICTIM_KEY": secret}}
    user_cfg = tmp_path / "xdg" / "disputatio" / "config.yaml"
    user_cfg.parent.mkdir(parents=True)
    write_config(user_cfg, [spy, victim], rounds=0)
    r = run_cli("Q?", "--fence", "require", "-q", cwd=home)
    assert r.returncode == 0, r.stderr
    folder = (home / r.stdout.strip()).parent
    assert secret in (folder / "lineup.json").read_text()   # it is there, outside the fence
    said = json.loads((folder / "debate.json").read_text())["turns"][0]
    assert said["turn_id"] == "proposal/spy" and said["ok"], said
    text = next(e for e in map(json.loads, (folder / "events.jsonl").read_text().splitlines())
                if e["type"] == "turn_completed" and e["data"]["turn_id"] == "proposal/spy")
    assert "read: 0 bytes" in text["data"]["text"]
    assert secret not in text["data"]["text"]


@needs_fence
def test_the_config_file_a_debate_started_from_is_empty_to_its_agents_also_on_resume(
        home, tmp_path):
    """A ``--config`` file holds every participant's env values too, wherever it is kept: no
    agent of the debate gets a byte of it, in its first run or a resumed one."""
    secret = "sk-other-participant-9876543210"
    kept = tmp_path / "secrets" / "lineup.yaml"
    kept.parent.mkdir()
    gate = tmp_path / "gate"
    # named on its command line, as an agent could name any file: so the fence lets it see there
    spy = {"adapter": "command", "name": "spy",
           "argv": ["sh", "-c", 'cat >/dev/null; echo "read: $(cat "$0" | wc -c) bytes"; '
                                'test -e "$1" || exit 1', str(kept), str(gate)]}
    victim = {"adapter": "simulated", "name": "victim", "model": "victim",
              "env": {"VICTIM_KEY": secret}}
    write_config(kept, [spy, victim], rounds=0)
    r = run_cli("Q?", "--config", str(kept), "--fence", "require", "-q", cwd=home)
    assert r.returncode == 1, r.stderr   # the spy failed once: a proposal short
    [folder] = (home / ".debate").glob("debate-*")
    started = json.loads((folder / "events.jsonl").read_text().splitlines()[0])["data"]
    assert started["config_file"] == str(kept.resolve())
    gate.touch()
    r = run_cli("resume", "-q", cwd=home)
    assert r.returncode == 0, r.stderr
    said = [e["data"] for e in map(json.loads, (folder / "events.jsonl").read_text().splitlines())
            if e["type"] == "turn_completed" and e["data"]["turn_id"] == "proposal/spy"]
    assert [d["ok"] for d in said] == [False, True], said
    assert "read: 0 bytes" in said[1]["text"] and secret in kept.read_text()
