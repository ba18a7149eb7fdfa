"""The GitHub client against the suite's own fake API on 127.0.0.1: create, find by marker,
update, pages, rate limits (retry-after, x-ratelimit-reset), 5xx and a dead server; and the
comment the action posts (its marker, what it shows, foreign text kept inert)."""

from __future__ import annotations

import json
import socket

import pytest

from disputatio import ci
from disputatio.github import Client, GitHubError
from support.fake_github import TOKEN, fake_github

REPO = "octo/app"


@pytest.fixture
def api():
    with fake_github() as state:
        yield state


def client(api, **kw) -> Client:
    waits: list[float] = []
    return Client(TOKEN, REPO, api.url, sleep=waits.append, clock=lambda: 1_000.0, **kw)


def test_create_then_find_by_marker_then_update_one_comment(api):
    c = client(api)
    api.add(REPO, 7, "an unrelated comment", author="someone")
    assert c.find(7, ci.MARKER) is None
    action, made = c.upsert(7, ci.MARKER, f"{ci.marker('a' * 40)}\nfirst")
    assert action == "created"
    action, again = c.upsert(7, ci.MARKER, f"{ci.marker('b' * 40)}\nsecond")
    assert action == "updated" and again.id == made.id
    bodies = [x["body"] for x in api.comments[(REPO, 7)]]
    assert bodies == ["an unrelated comment", f"{ci.marker('b' * 40)}\nsecond"]
    assert ci.reviewed_head(c.find(7, ci.MARKER).body) == "b" * 40


def test_a_marker_written_by_someone_else_is_not_ours(api):
    api.add(REPO, 7, ci.marker("c" * 40) + "\nforged", author="mallory")
    assert client(api).find(7, ci.MARKER, author=ci.BOT) is None
    assert client(api).find(7, ci.MARKER) is not None


def test_every_page_of_comments_is_read(api):
    for n in range(230):
        api.add(REPO, 3, f"comment {n}")
    api.add(REPO, 3, ci.marker("d" * 40))
    c = client(api)
    assert len(c.comments(3)) == 231 and c.find(3, ci.MARKER) is not None
    assert [p for m, p in api.requests if m == "GET"][-1].endswith("page=3")


def test_a_secondary_rate_limit_is_waited_out_as_retry_after_says(api):
    api.failures = [(429, {"retry-after": "7"}, "slow down"),
                    (403, {"retry-after": "2"}, "You have exceeded a secondary rate limit")]
    c = client(api)
    c.create(5, "hello")
    assert c.waited == [7.0, 2.0] and len(api.comments[(REPO, 5)]) == 1


def test_the_primary_rate_limit_waits_until_its_reset(api):
    api.failures = [(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1030"},
                     "API rate limit exceeded")]
    c = client(api)
    assert c.comments(5) == [] and c.waited == [30.0]


def test_a_rate_limit_too_long_to_wait_is_reported(api):
    api.failures = [(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "4600"},
                     "API rate limit exceeded")]
    with pytest.raises(GitHubError, match="rate limited for 3600 s more") as exc:
        client(api).comments(5)
    assert exc.value.status == 403


def test_5xx_is_tried_again_with_growing_pauses_then_given_up(api):
    api.failures = [(502, {}, "bad gateway"), (503, {}, "unavailable")]
    c = client(api)
    c.create(5, "hello")
    assert c.waited == [1.0, 2.0]
    api.failures = [(500, {}, "boom")] * 4
    c = client(api)
    with pytest.raises(GitHubError, match="500 boom .gave up after 4 attempts"):
        c.create(5, "again")
    assert c.waited == [1.0, 2.0, 4.0]


def test_a_plain_403_or_404_is_not_retried(api):
    api.failures = [(403, {}, "Resource not accessible by integration")]
    c = client(api)
    with pytest.raises(GitHubError, match="403 Resource not accessible") as exc:
        c.create(5, "x")
    assert exc.value.status == 403 and c.waited == []
    with pytest.raises(GitHubError, match="401 Bad credentials"):
        Client("wrong", REPO, api.url, sleep=lambda s: None).comments(5)


def test_a_server_that_is_not_there_is_tried_then_reported():
    with socket.socket() as s:   # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    waits: list[float] = []
    c = Client(TOKEN, REPO, f"http://127.0.0.1:{port}", sleep=waits.append, attempts=2)
    with pytest.raises(GitHubError, match="gave up after 2 attempts"):
        c.comments(1)
    assert waits == [1.0]


def verdict(**over) -> dict:
    v = {"verdict": "fail", "reason": "upheld at or above blocking: F1", "warning": None,
         "change": {"mode": "range", "base": "1" * 40, "head": "2" * 40, "files": ["app.py"],
                    "incremental_from": None, "note": None},
         "findings": [{"id": "F1", "severity": "blocking", "ruling": "upheld", "file": "app.py",
                       "line": 5, "point": "Divides | by zero <script>x</script> @team",
                       "reasons": "r", "evidence": [], "raised_by": ["ada"],
                       "fingerprint": "f"},
                      {"id": "F2", "severity": "minor", "ruling": "rejected", "file": None,
                       "line": None, "point": "nit", "reasons": "", "evidence": [],
                       "raised_by": [], "fingerprint": "g"}],
         "agents": [{"name": "ada", "seats": ["participant"], "adapter": "claude",
                     "cli_version": "2.1.0", "turns": 2, "failed": 0, "cost_usd": 0.25,
                     "cost_complete": True, "tokens": {"input": 100, "output": 20}}],
         "cost_usd": 0.25, "cost_complete": True, "counts": {"blocking": 1},
         "ledger": {"events": 9, "head": "e" * 64}}
    v.update(over)
    return v


def test_the_comment_shows_the_verdict_and_keeps_foreign_text_inert():
    text = ci.body(verdict(), previous="3" * 40, run_url="https://example.test/run/1")
    # a failed review does not move the marker: the next run sees these commits again
    assert text.startswith(ci.marker("3" * 40))
    assert ci.reviewed_head(ci.body(verdict(verdict="pass"), previous="3" * 40)) == "2" * 40
    assert "❌ fail" in text and "`app.py:5`" in text and "1 finding(s) raised and rejected" in text
    assert "Divides \\| by zero &lt;script&gt;" in text and "@\u200bteam" in text
    assert "| ada | participant | 2.1.0 | 2 (0 failed) | $0.2500 | 120 |" in text


def test_a_review_without_verdict_keeps_the_previously_reviewed_head():
    v = verdict(verdict="none", reason="the judge gave no ruling", findings=[],
                warning="NO VERDICT — passed only because of --fail-open: x")
    text = ci.body(v, previous="9" * 40)
    assert ci.reviewed_head(text) == "9" * 40
    assert "> **NO VERDICT" in text and "⚠️ no verdict" in text
    assert ci.reviewed_head(ci.body(v)) is None


def test_the_outputs_name_the_cost_of_each_agent(tmp_path):
    bob = {"name": "bob", "seats": ["participant", "judge"], "adapter": "codex",
           "cli_version": None, "turns": 3, "failed": 1, "cost_usd": 0.1,
           "cost_complete": False, "tokens": {}}
    v = verdict(agents=[*verdict()["agents"], bob], exit_code=1, report="/d/respondeo.md",
                sarif="/d/findings.sarif", debate="/d")
    out = tmp_path / "github-output"
    ci.outputs(v, out)
    lines = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert json.loads(lines["costs"]) == {"ada": 0.25, "bob": None}   # bob's is not all known
    assert lines["cost"] == "0.250000" and lines["blocking"] == "1"
