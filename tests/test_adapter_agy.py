"""agy adapter. agy is not on npm and never ran here, so every output below is made up from
third-party reports; these tests pin our reading of them, not agy's behaviour."""

from __future__ import annotations

import pytest

from disputatio.adapters.agy import ADAPTER, INLINE_LIMIT
from disputatio.adapters.base import API_ERROR, AUTH, EMPTY, RATE_LIMIT, TurnRequest
from support.captures import made


def test_small_prompt_rides_attached_to_print():
    req = TurnRequest(prompt="-x Review this", bin="/opt/agy", model="gemini-3.5-flash-high",
                      timeout_s=600, extra_args=("--add-dir", "/data"))
    inv = ADAPTER.build(req)
    assert inv.argv == ("/opt/agy", "--sandbox", "--print-timeout", "11m",
                        "--model", "gemini-3.5-flash-high", "--add-dir", "/data",
                        "--print=-x Review this")
    assert inv.stdin is None and inv.files == {}  # agy reportedly ignores a piped stdin


def test_print_timeout_only_with_a_timeout_and_one_minute_past_ours():
    assert "--print-timeout" not in ADAPTER.build(TurnRequest(prompt="p", bin="agy")).argv
    argv = ADAPTER.build(TurnRequest(prompt="p", bin="agy", timeout_s=61)).argv
    assert argv[argv.index("--print-timeout") + 1] == "3m"


def test_large_prompt_goes_to_a_file_agy_is_told_to_read():
    prompt = "x" * (INLINE_LIMIT + 1)
    inv = ADAPTER.build(TurnRequest(prompt=prompt, bin="agy"))
    assert inv.files == {"prompt.md": prompt.encode()}
    assert inv.argv[-3:-1] == ("--add-dir", "{scratch}")
    assert inv.argv[-1].startswith("--print=") and "{scratch}/prompt.md" in inv.argv[-1]
    assert max(len(a) for a in inv.argv) < 1000


def test_stdout_text_is_the_answer(tmp_path):
    r = ADAPTER.parse(made(tmp_path, "\x1b[1mVERDICT\x1b[0m: ship it\n", "log line\n"))
    assert r.ok and r.text == "VERDICT: ship it"


def test_an_answer_that_mentions_authentication_is_still_an_answer(tmp_path):
    r = ADAPTER.parse(made(tmp_path, "## Verdict\nThe login page says authentication required.\n"))
    assert r.ok and r.text.startswith("## Verdict")


@pytest.mark.parametrize("stdout, stderr, code, kind", [
    ("Authentication required. Open this URL to sign in: https://…\n", "", 0, AUTH),
    ("", "Error: UNAUTHENTICATED: request had invalid credentials\n", 1, AUTH),
    ("", "Error: RESOURCE_EXHAUSTED: quota exceeded for model\n", 1, RATE_LIMIT),
    ("", "panic: runtime error\n", 2, API_ERROR),
])
def test_failures(tmp_path, stdout, stderr, code, kind):
    r = ADAPTER.parse(made(tmp_path, stdout, stderr, code))
    assert not r.ok and r.failure == kind and "\n" not in r.message


def test_blank_output_is_empty(tmp_path):
    assert ADAPTER.parse(made(tmp_path, "\n\n")).failure == EMPTY
