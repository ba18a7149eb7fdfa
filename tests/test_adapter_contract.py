"""What every CLI adapter promises, checked across all of them, plus the shared helpers."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

from disputatio import adapters, config
from disputatio.adapters import kit, transport
from disputatio.adapters.base import (
    API_ERROR,
    AUTH,
    EMPTY,
    INTERRUPTED,
    KILLED,
    NOT_INSTALLED,
    NOT_RUNNABLE,
    RATE_LIMIT,
    TIMEOUT,
    Capture,
    TurnRequest,
)
from disputatio.adapters.fence import StateDir

# every adapter that runs a CLI of its own (simulated runs disputatio itself, tested by the demo)
NAMES = tuple(a.name for a in adapters.every() if a.kind != adapters.SIMULATED)


@pytest.mark.parametrize("name", NAMES)
def test_each_module_exposes_a_described_adapter(name):
    a = adapters.get(name)
    assert a.name == name and a.vendor and isinstance(a.default_bin, str)
    assert isinstance(a.version_args, tuple)
    assert a.tested_version is None or a.tested_version[0].isdigit()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("capture, kind", [
    (dict(spawn_error="/opt/x: No such file or directory"), NOT_INSTALLED),
    (dict(spawn_error="/opt/x: Permission denied"), NOT_RUNNABLE),
    (dict(timed_out=True, duration_s=600.2), TIMEOUT),
    (dict(interrupted=True), INTERRUPTED),
    (dict(signal=9), KILLED),
])
def test_process_failures_come_first(name, capture, kind, tmp_path):
    # stdout that would otherwise read as a success must not win over the process failure
    (tmp_path / "o").write_text("answer\n")
    r = adapters.get(name).parse(Capture(tmp_path / "o", tmp_path / "e", **capture))
    assert not r.ok and r.failure == kind


@pytest.mark.parametrize("name", NAMES)
def test_env_and_bin_pass_through(name):
    inv = adapters.get(name).build(TurnRequest(prompt="p", bin="/x/cli", env={"K": "v"}))
    assert inv.argv[0] == "/x/cli" and inv.env["K"] == "v"


# -- the registry -----------------------------------------------------------------------------

def test_the_registry_lists_each_adapter_once_under_its_own_name():
    every = adapters.every()
    assert [a.name for a in every] == list(adapters.names()) == list(config.ADAPTERS)
    assert len(set(adapters.names())) == len(every) >= 8
    assert len({id(a) for a in every}) == len(every)  # no module registered twice


@pytest.mark.parametrize("name", adapters.names())
def test_every_registered_adapter_keeps_the_contract(name):
    a = adapters.get(name)
    assert a.name == name and isinstance(a.vendor, str) and a.vendor
    assert a.kind in adapters.KINDS
    assert isinstance(a.default_bin, str) and (a.default_bin or a.kind == adapters.CUSTOM)
    assert a.tested_version is None or a.tested_version[0].isdigit()
    assert isinstance(a.version_args, tuple) and all(isinstance(x, str) for x in a.version_args)
    # the write fence leaves exactly these writable: each names its variable or a default
    assert isinstance(a.state_dirs, tuple)
    assert all(isinstance(d, StateDir) and (d.var or d.defaults) for d in a.state_dirs)
    assert all(callable(getattr(a, m, None)) for m in ("build", "parse", "collect",
                                                       "read_version"))
    assert a.package is None or (a.kind == adapters.AGENT and a.tested_version)


def test_agent_clis_declare_where_they_keep_their_login():
    """An agent CLI with no state dir would be fenced out of its own login."""
    for a in adapters.agents():
        assert a.state_dirs, a.name


def test_the_clis_proven_here_are_the_ones_installable_for_the_real_tier():
    proven = adapters.agents(tested=True)
    assert [a.name for a in proven] == ["claude", "codex", "gemini", "copilot", "pi"]
    assert all(a.package for a in proven)
    assert "agy" in [a.name for a in adapters.agents()]  # an agent, but never run here


def test_the_docs_give_each_cli_adapter_a_section_at_its_tested_version():
    doc = (Path(__file__).parents[1] / "docs" / "adapters.md").read_text()
    headings = dict(re.findall(r"(?m)^## (\S+) — (.*)$", doc))
    for a in adapters.every():
        if a.kind == adapters.SIMULATED:
            continue  # --demo, documented in the README
        assert a.name in headings, a.name
        if a.tested_version:
            assert headings[a.name].endswith(f", tested {a.tested_version}"), a.name


def test_config_refuses_an_unregistered_adapter_and_suggests_a_registered_one():
    with pytest.raises(ValueError, match="unknown adapter 'simulatd' \\(did you mean "
                                         "'simulated'\\?\\); known: claude, codex, "):
        config.Participant(adapter="simulatd")
    assert config.Participant(adapter="agy").vendor == adapters.get("agy").vendor == "Google"


def test_vendor_warnings_group_agent_clis_only():
    def lineup(*names, judge):
        return config.DebateConfig(
            participants=[{"adapter": n, "name": f"p{i}", "argv": ["x"]} for i, n in
                          enumerate(names)],
            judge={"adapter": judge, "name": "judge", "model": "j", "argv": ["y"]})
    # gemini and agy: one vendor, from the registry
    warned = config.lineup_warnings(lineup("gemini", "agy", judge="codex"))
    assert warned == ["participants p0, p1 share a vendor (Google); their positions may converge"]
    # neither any CLI from config nor the simulation has a vendor to share
    assert config.lineup_warnings(lineup("command", "command", "simulated", "simulated",
                                         judge="command")) == []
    assert config.lineup_warnings(lineup("claude", "codex", judge="claude")) == [
        "the judge shares a vendor (Anthropic) with p0 and the lineup has no judge without such "
        "a conflict, so it rules on their arguments anyway (recusal: vendor)"]


def test_a_simple_adapter_is_a_handful_of_assignments(tmp_path):
    class Echo(kit.BasicAdapter):
        name = "echo"
        vendor = "Echo Inc."
        args = ("--print",)
        effort_flag = "--effort"

    echo = Echo()
    assert echo.default_bin == "echo" and echo.kind == adapters.AGENT
    inv = echo.build(TurnRequest(prompt="p", bin="/b/echo", model="m", effort="hi",
                                 max_budget_usd=2.0, extra_args=("-x",), env={"K": "v"}))
    assert inv.argv == ("/b/echo", "--print", "--model", "m", "--effort", "hi", "-x")
    assert inv.stdin == b"p" and inv.env == {"K": "v"} and inv.files == {} and not inv.give_up
    (tmp_path / "o").write_text("\x1b[1manswer\x1b[0m\n")
    (tmp_path / "e").write_text("")
    ok = echo.parse(Capture(tmp_path / "o", tmp_path / "e", exit_code=0))
    assert ok.ok and ok.text == "answer"
    (tmp_path / "e").write_text("Error: 401 Unauthorized\n")
    failed = echo.parse(Capture(tmp_path / "o", tmp_path / "e", exit_code=1))
    assert (failed.failure, failed.message) == (AUTH, "Error: 401 Unauthorized")
    (tmp_path / "o").write_text("  \n")
    assert echo.parse(Capture(tmp_path / "o", tmp_path / "e", exit_code=0)).failure == EMPTY
    assert echo.collect(Capture(tmp_path / "o", tmp_path / "e"), {}) == {}
    assert echo.read_version("echo version 1.2.3-beta.1 (build 7)\n") == "1.2.3-beta.1"


def test_the_kit_passes_only_the_flags_a_cli_has():
    class Plain(kit.BasicAdapter):
        name = "plain"
        vendor = "x"
        model_flag = None

    inv = Plain().build(TurnRequest(prompt="p", bin="plain", model="m", effort="e",
                                    max_budget_usd=1.0))
    assert inv.argv == ("plain",)


def test_result_line_is_the_last_result_object(tmp_path):
    (tmp_path / "o").write_text('{"type":"result","n":1}\nlog\n{"type":"x"}\n'
                                '{"type":"result","n":2}\n{"type":"y"}\n')
    cap = Capture(tmp_path / "o", tmp_path / "e")
    assert kit.result_line(cap) == {"type": "result", "n": 2}
    assert kit.result_line(cap, "x") == {"type": "x"} and kit.result_line(cap, "z") is None


# A stand-in CLI: hashes the prompt wherever the adapter put it (stdin, or a file named in argv).
ECHO = """\
import hashlib, os, re, sys
data = sys.stdin.buffer.read()
if not data:
    for arg in sys.argv[1:]:
        m = re.search(r"(/\\S*prompt\\.md)", arg)
        if m and os.path.exists(m.group(1)):
            data = open(m.group(1), "rb").read()
print(len(data), hashlib.sha256(data).hexdigest())
"""


@pytest.mark.parametrize("name", NAMES)
def test_a_1mb_prompt_arrives_whole(name, tmp_path):
    script = tmp_path / "fake-cli"
    script.write_text(f"#!{sys.executable}\n{ECHO}")
    script.chmod(0o755)
    prompt = ("Déjà vu ✓ " * 110_000)[:1_000_000] + "\nEND"
    data = prompt.encode()
    inv = adapters.get(name).build(TurnRequest(prompt=prompt, bin=str(script), timeout_s=60))
    assert max(len(a.encode()) for a in inv.argv) < 128 * 1024  # one argv element's limit
    cap = transport.run(inv, tmp_path, 60, tmp_path / "raw", "turn")
    assert cap.exit_code == 0, cap.read_stderr()
    assert cap.read_stdout().split() == [str(len(data)), hashlib.sha256(data).hexdigest()]


# -- shared helpers ---------------------------------------------------------------------------

@pytest.mark.parametrize("message, status, kind", [
    ("anything", 401, AUTH),
    ("anything", 429, RATE_LIMIT),
    ("Request failed with 500", 500, API_ERROR),
    ("unexpected status 403 Forbidden", None, AUTH),
    ("Not logged in · Please run /login", None, AUTH),
    ("No API key found for the selected model.", None, AUTH),
    ("RESOURCE_EXHAUSTED: quota", None, RATE_LIMIT),
    ("Connection error.", None, API_ERROR),
])
def test_classify(message, status, kind):
    assert kit.classify(message, status) == kind


def test_last_json_object_skips_logs_and_dumps_before_it():
    text = ('Warning: x\n_ApiError: {"a": 1}\n  status: 401\n}\n'
            + json.dumps({"error": {"code": 401}}, indent=2))
    assert kit.last_json_object(text) == {"error": {"code": 401}}
    assert kit.last_json_object("no json here\n") is None
    pretty = json.dumps({"response": "x", "warnings": [{"w": 1}]}, indent=2)
    assert kit.last_json_object(pretty)["response"] == "x"


def test_dig():
    data = {"a": [{"b": "x"}]}
    assert kit.dig(data, "a.0.b") == "x"
    with pytest.raises(LookupError, match="no 'c' in dict"):
        kit.dig(data, "a.0.c")


def test_error_line_prefers_the_error_then_the_cause_then_the_end():
    assert kit.error_line("log\nError: boom\nhelp\n") == "Error: boom"
    assert kit.error_line("No API key found.\n\nSee docs/x.md\n") == "No API key found."
    assert kit.error_line("a\n\x1b[31mlast\x1b[0m\n") == "last"
