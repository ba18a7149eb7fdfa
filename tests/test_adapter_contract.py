"""What every CLI adapter promises, checked across all of them, plus the shared helpers."""

from __future__ import annotations

import hashlib
import json
import sys

import pytest

from disputatio import adapters
from disputatio.adapters import kit, transport
from disputatio.adapters.base import (
    API_ERROR,
    AUTH,
    INTERRUPTED,
    KILLED,
    NOT_INSTALLED,
    NOT_RUNNABLE,
    RATE_LIMIT,
    TIMEOUT,
    Capture,
    TurnRequest,
)

NAMES = ("claude", "codex", "gemini", "copilot", "pi", "agy", "command")


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
