"""The write fence's policy as pure functions: the bwrap command line and its mount order, the
state paths each CLI declares, what is protected inside a grant, what stays reachable under the
private /tmp, the macOS profile, the modes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from disputatio.adapters import fence
from disputatio.adapters.fence import StateDir
from support import invoke


def test_bwrap_argv_binds_in_an_order_where_the_narrow_grant_wins():
    argv = fence.bwrap_argv("/usr/bin/bwrap", ["claude", "-p"], cwd=Path("/w/ck"),
                            private_tmp=Path("/t/priv"), readable=[Path("/tmp/bin")],
                            state=[Path("/h/.claude")], protect=[Path("/h/.claude/repo")],
                            writable=[Path("/w/ck")], uid=0)
    assert argv == [
        "/usr/bin/bwrap", "--die-with-parent", "--unshare-user", "--unshare-pid",
        "--unshare-ipc", "--cap-drop", "ALL", "--cap-add", "CAP_SETFCAP",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        "--ro-bind-try", "/proc/sys", "/proc/sys",
        "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
        "--ro-bind-try", "/proc/irq", "/proc/irq", "--ro-bind-try", "/proc/bus", "/proc/bus",
        "--bind", "/t/priv", "/tmp",
        "--ro-bind", "/tmp/bin", "/tmp/bin", "--bind", "/h/.claude", "/h/.claude",
        "--ro-bind", "/h/.claude/repo", "/h/.claude/repo", "--bind", "/w/ck", "/w/ck",
        "--chdir", "/w/ck", "--", "claude", "-p"]
    assert "--cap-drop" not in fence.bwrap_argv("bwrap", ["x"], cwd=Path("/"),
                                                private_tmp=Path("/t"), uid=1000)
    # our process group and session are the agent's (no new session), the network too
    assert not {"--new-session", "--unshare-net", "--unshare-all"} & set(argv)


def test_state_paths_follow_the_cli_variables_else_the_home_defaults():
    claude = StateDir("CLAUDE_CONFIG_DIR", ("~/.claude", "~/.claude.json"))
    gemini = StateDir("GEMINI_CLI_HOME", ("~/.gemini",), subdir=".gemini")
    env = {"HOME": "/home/u"}
    assert fence.state_paths([claude, gemini], env) == [
        Path("/home/u/.claude"), Path("/home/u/.claude.json"), Path("/home/u/.gemini")]
    env |= {"CLAUDE_CONFIG_DIR": "/cfg/claude", "GEMINI_CLI_HOME": "/g"}
    assert fence.state_paths([claude, gemini], env) == [Path("/cfg/claude"),
                                                        Path("/g/.gemini")]


def test_every_cli_adapter_declares_where_it_must_write():
    from disputatio import adapters

    declared = {n: fence.state_paths(adapters.get(n).state_dirs, {"HOME": "/h"})
                for n in ("claude", "codex", "gemini", "copilot", "pi")}
    assert declared == {
        "claude": [Path("/h/.claude")],
        "codex": [Path("/h/.codex")], "gemini": [Path("/h/.gemini")],
        "copilot": [Path("/h/.copilot"), Path("/h/.cache/copilot")], "pi": [Path("/h/.pi")]}
    assert adapters.get("command").state_dirs == ()


def test_only_protected_paths_inside_a_grant_are_bound_again(tmp_path):
    (tmp_path / "home" / "repo").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    got = fence.covering([tmp_path / "home"], [tmp_path / "home" / "repo",
                                               tmp_path / "elsewhere", tmp_path / "home"])
    assert got == [tmp_path / "home" / "repo", tmp_path / "home"]


def test_binaries_under_the_real_tmp_stay_reachable(tmp_path):
    (tmp_path / "bin" / "sub").mkdir(parents=True)
    got = fence.tmp_reachable([str(tmp_path / "bin" / "sub"), str(tmp_path / "bin"), "/usr/bin",
                               "", str(tmp_path / "missing")], Path("/tmp"))
    assert got == ([tmp_path / "bin"] if tmp_path.is_relative_to("/tmp") else [])


def test_the_agent_temp_dir_is_the_private_tmp():
    assert fence.inner_env({"TMPDIR": "/var/x", "TEMP": "/y", "A": "1"}) == \
        {"TMPDIR": "/tmp", "TEMP": "/tmp", "A": "1"}


def test_the_macos_profile_denies_writes_except_the_grants():
    profile = fence.sbpl_profile([Path("/Users/u/ck"), Path('/odd "dir"')])
    assert profile.startswith("(version 1)\n(allow default)\n(deny file-write*)\n")
    assert '(subpath "/Users/u/ck")' in profile and '(subpath "/odd \\"dir\\"")' in profile
    assert profile.count("(allow file-write*") == 1
    guarded = fence.sbpl_profile([Path("/Users/u")], [Path("/Users/u/repo")])
    assert guarded.endswith('(deny file-write* (subpath "/Users/u/repo"))\n')


def test_wrap_on_macos_grants_the_same_paths(tmp_path):
    (tmp_path / "ck").mkdir()
    seatbelt = fence.Fence("sandbox-exec", tool="/usr/bin/sandbox-exec")
    argv, env = fence.wrap(seatbelt, ["claude", "-p"], cwd=tmp_path / "ck",
                           env={"TMPDIR": "/var/folders/x", "HOME": str(tmp_path)},
                           writable=[tmp_path / "ck"], state=[tmp_path / ".claude"],
                           private_tmp=tmp_path / "priv", protect=[tmp_path / ".claude" / "r"])
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[3:] == ["claude", "-p"]
    for granted in (tmp_path / ".claude", tmp_path / "ck", tmp_path / "priv"):
        assert f'(subpath "{os.path.realpath(granted)}")' in argv[2]
    assert (tmp_path / ".claude").is_dir()  # created before the run, like under bwrap
    assert env["TMPDIR"] == str(tmp_path / "priv")  # Seatbelt cannot move /tmp


def test_modes(monkeypatch):
    assert fence.choose("off") == fence.OFF and not fence.OFF.on
    with pytest.raises(ValueError):
        fence.choose("sometimes")
    monkeypatch.setattr(fence, "available", lambda: fence.Fence(None, "no bwrap"))
    assert fence.choose("auto").record() == {"fence": "none", "fence_reason": "no bwrap"}
    with pytest.raises(fence.FenceUnavailable, match="required but unavailable: no bwrap"):
        fence.choose("require")
    assert fence.default_mode({"DISPUTATIO_FENCE": "Require"}) == "require"
    with pytest.raises(ValueError, match="DISPUTATIO_FENCE='requir' is not a fence mode"):
        fence.default_mode({"DISPUTATIO_FENCE": "requir"})
    assert fence.default_mode({}) == fence.default_mode({"DISPUTATIO_FENCE": " "}) == "auto"


def test_a_misspelt_fence_variable_is_refused_before_anything_is_made(home):
    bad = {"DISPUTATIO_FENCE": "requir"}
    for args in (("--demo", "Q?"), ("doctor", "--demo")):
        r = invoke(*args, cwd=home, env=bad)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.splitlines() == [
            "error: DISPUTATIO_FENCE='requir' is not a fence mode (auto, require or off)"], args
    assert not (home / ".debate").exists()
    ran = invoke("--demo", "Q?", "-q", "--fence", "off", cwd=home, env=bad)  # the flag wins
    assert ran.returncode == 0, ran.stderr


def test_the_probe_names_why_there_is_no_fence():
    assert fence._probe("linux", None, None).reason.startswith("bwrap (bubblewrap) is not on")
    assert fence._probe("darwin", None, None).reason == \
        "sandbox-exec is not available on this macOS"
    assert fence._probe("win32", None, None).reason == "no write fence for platform win32"


def test_a_program_under_tmp_brings_its_installation():
    got = fence.tmp_homes(["/tmp/clone/.venv/bin/python", "/tmp/clone/src", "/usr/lib/python3",
                           "/tmp/other/x/y", "", "/tmp"], Path("/tmp"))
    assert got == ["/tmp/clone", "/tmp/other"]


def test_the_transport_left_to_choose_refuses_a_misspelt_mode_too(monkeypatch):
    """A caller that runs agents without choosing a fence first gets no quiet ``auto``."""
    from disputatio.adapters import transport

    monkeypatch.setenv("DISPUTATIO_FENCE", "requir")
    monkeypatch.setattr(transport, "_fence", None)
    with pytest.raises(ValueError, match="is not a fence mode"):
        transport.current_fence()
