"""command adapter: any CLI described by an argv template, unit by unit and end to end."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from disputatio.adapters import transport
from disputatio.adapters.base import API_ERROR, EMPTY, UNPARSEABLE, Capture, TurnRequest
from disputatio.adapters.command import ADAPTER


def req(argv=None, prompt="the prompt", bin="", **kw) -> TurnRequest:
    options = {k: kw.pop(k) for k in ("output", "answer_path") if k in kw}
    if argv is not None:
        options["argv"] = argv
    return TurnRequest(prompt=prompt, bin=bin, options=options, **kw)


def parse(tmp_path: Path, request: TurnRequest, stdout: str, stderr: str = "",
          exit_code: int = 0):
    """A finished process as the transport reports it, carrying build's context."""
    (tmp_path / "turn.stdout").write_text(stdout)
    (tmp_path / "turn.stderr").write_text(stderr)
    cap = Capture(tmp_path / "turn.stdout", tmp_path / "turn.stderr", exit_code=exit_code,
                  context=ADAPTER.build(request).context)
    return ADAPTER.parse(cap)


# -- build ------------------------------------------------------------------------------------

def test_placeholders_and_prompt_file():
    inv = ADAPTER.build(req(["mycli", "run", "--model", "{model}", "--effort={effort}",
                             "--input", "{prompt_file}"], model="m1", effort="low",
                            extra_args=("--quiet",)))
    assert inv.argv == ("mycli", "run", "--model", "m1", "--effort=low",
                        "--input", "{scratch}/prompt.md", "--quiet")
    assert inv.stdin is None and inv.files["prompt.md"] == b"the prompt"


def test_without_prompt_file_the_prompt_goes_on_stdin():
    inv = ADAPTER.build(req(["mycli", "ask"]))
    assert inv.argv == ("mycli", "ask") and inv.stdin == b"the prompt"
    assert "prompt.md" not in inv.files


def test_unset_model_drops_the_placeholder_and_its_flag():
    inv = ADAPTER.build(req(["mycli", "--model", "{model}", "--effort={effort}", "{model}",
                             "-"]))
    assert inv.argv == ("mycli", "-")


def test_bin_replaces_argv0_and_no_argv_means_just_bin():
    assert ADAPTER.build(req(["mycli", "x"], bin="/usr/local/bin/mycli")).argv[0] == \
        "/usr/local/bin/mycli"
    assert ADAPTER.build(req(bin="/usr/bin/agent")).argv == ("/usr/bin/agent",)


def test_argv_must_be_strings():
    with pytest.raises(ValueError, match="list of strings"):
        ADAPTER.build(req(["mycli", 3]))


# -- parse ------------------------------------------------------------------------------------

def test_text_output_is_the_answer(tmp_path):
    r = parse(tmp_path, req(["c"]), "  the answer\n")
    assert r.ok and r.text == "the answer"


@pytest.mark.parametrize("stdout, path, text", [
    ('{"result": {"text": "whole"}}', "result.text", "whole"),
    ('starting…\n{"choices": [{"message": {"content": "last line"}}]}\n',
     "choices.0.message.content", "last line"),
    ('"just a string"', None, "just a string"),
])
def test_json_output(tmp_path, stdout, path, text):
    r = parse(tmp_path, req(["c"], output="json", answer_path=path), stdout)
    assert r.ok and r.text == text


@pytest.mark.parametrize("stdout, path, words", [
    ("not json at all", "a", "JSON on stdout"),
    ('{"result": {}}', "result.text", "an answer at 'result.text' (no 'text' in dict)"),
    ('{"choices": []}', "choices.0.text", "no item 0 in a list of 0"),
    ('{"result": "x"}', None, "an 'answer_path'"),
    ('{"n": 3}', "n", "a string at 'answer_path'"),
])
def test_json_not_understood(tmp_path, stdout, path, words):
    r = parse(tmp_path, req(["c"], output="json", answer_path=path), stdout)
    assert r.failure == UNPARSEABLE and words in r.message


def test_nonzero_exit_is_api_error_with_the_last_stderr_line(tmp_path):
    r = parse(tmp_path, req(["c"]), "partial", "starting\nfatal: model overloaded\n", 3)
    assert r.failure == API_ERROR and r.message == "fatal: model overloaded"


@pytest.mark.parametrize("stdout, output", [
    ("\n", "text"), ('{"a": null}', "json"),
    # nothing is left once control sequences are stripped, as they are before the ledger
    ("\x1b]0;title\x07\x1b[2J\x00\r\n", "text"), ('{"a": "\\u001b[2J\\u0000"}', "json"),
])
def test_empty_answer(tmp_path, stdout, output):
    r = parse(tmp_path, req(["c"], output=output, answer_path="a"), stdout)
    assert r.failure == EMPTY


# -- end to end through the real transport ----------------------------------------------------

FAKE_CLI = """\
import json, sys
args = sys.argv[1:]
model = args[args.index("--model") + 1] if "--model" in args else "none"
if "--input" in args:
    prompt = open(args[args.index("--input") + 1], encoding="utf-8").read()
else:
    prompt = sys.stdin.read()
if "--fail" in args:
    print("loading…", file=sys.stderr)
    print("error: quota exhausted for " + model, file=sys.stderr)
    sys.exit(2)
print("log: thinking")
answer = f"{model} read {len(prompt)} chars ending {prompt[-3:]}"
print(json.dumps({"choices": [{"message": {"content": answer}}]}))
"""


@pytest.fixture
def fake_cli(tmp_path):
    script = tmp_path / "fake_cli.py"
    script.write_text(FAKE_CLI)
    return script


def run(request, tmp_path):
    cap = transport.run(ADAPTER.build(request), tmp_path, 30, tmp_path / "raw", "t1")
    return ADAPTER.parse(cap)


def test_end_to_end_json_with_prompt_file_and_model(fake_cli, tmp_path):
    prompt = "é" * 200_000 + "END"
    r = run(req([sys.executable, str(fake_cli), "--model", "{model}", "--input",
                 "{prompt_file}"], prompt=prompt, model="m7", output="json",
                answer_path="choices.0.message.content"), tmp_path)
    assert r.ok and r.text == "m7 read 200003 chars ending END"


def test_end_to_end_text_on_stdin_without_model(fake_cli, tmp_path):
    r = run(req([sys.executable, str(fake_cli), "--model", "{model}"], prompt="hi there"),
            tmp_path)
    assert r.ok and r.text.startswith("log: thinking\n")  # text mode: all of stdout
    assert r.text.endswith('"none read 8 chars ending ere"}}]}')


def test_end_to_end_failure(fake_cli, tmp_path):
    r = run(req([sys.executable, str(fake_cli), "--fail"]), tmp_path)
    assert r.failure == API_ERROR and r.message == "error: quota exhausted for none"
