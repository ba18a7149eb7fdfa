"""``disputatio watch --human``: the one write route. It exists only with ``--human``, takes an
answer only from the viewer's own page (Host, Origin and the page's token), only for the question
the debate has open, and hands it over as the answer file; a real ``run --human`` on a
pseudo-terminal is answered through it and records the answer."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from disputatio import human_channel, ledger
from disputatio.protocols.base import Ask
from support import sim, wait_for, write_config
from support.terminal import PROMPT, Terminal
from support.watching import get, make_debate, viewer

ASK = Ask("round-1", 1, "Reaction round 1 is over", participants=("advocate", "skeptic"))
SKIP = json.dumps({"key": "round-1", "action": "skip"})


def token_of(url: str, path: str = "/") -> str | None:
    found = re.search(r'<meta name="disputatio-human" content="([^"]+)">',
                      get(url, path).body.decode())
    return found.group(1) if found else None


def post(url: str, debate: Path, body: str, token: str | None, origin: str | None = "own",
         host: str | None = None):
    port = url.rstrip("/").rsplit(":", 1)[1]
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body.encode()))}
    if origin is not None:
        headers["Origin"] = f"http://127.0.0.1:{port}" if origin == "own" else origin
    if token is not None:
        headers["X-Disputatio-Token"] = token
    return _send(url, f"/v1/debates/{debate.name}/human", body, headers, host)


def _send(url, path, body, headers, host):
    import http.client

    hostname, port = url.split("//")[1].rstrip("/").split(":")
    conn = http.client.HTTPConnection(hostname, int(port), timeout=10)
    try:
        conn.putrequest("POST", path, skip_host=True)
        conn.putheader("Host", host or f"{hostname}:{port}")
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.endheaders(body.encode())
        r = conn.getresponse()
        raw = r.read()
        is_json = r.getheader("content-type") == "application/json"
        return r.status, json.loads(raw) if is_json else raw.decode()
    finally:
        conn.close()


def answers(debate: Path) -> list[str]:
    folder = debate / "human"
    return sorted(n for n in os.listdir(folder) if n != "ask.json") if folder.exists() else []


@pytest.fixture
def debate(home):
    return make_debate(home)


def test_without_human_there_is_no_route_and_no_token(debate, home):
    with human_channel.Channel(debate, ASK), viewer(home) as (url, _):
        assert token_of(url) is None and token_of(url, f"/debates/{debate.name}") is None
        assert get(url, f"/v1/debates/{debate.name}/human").status == 404
        status, _ = post(url, debate, SKIP, token="anything")
        assert status in (404, 405)
        assert answers(debate) == []


def test_the_open_question_is_served(debate, home):
    with viewer(home, human=True) as (url, _):
        assert get(url, f"/v1/debates/{debate.name}/human").json() == {"question": None}
        with human_channel.Channel(debate, ASK):
            got = get(url, f"/v1/debates/{debate.name}/human").json()["question"]
            assert got["key"] == "round-1" and got["participants"] == ["advocate", "skeptic"]
        assert get(url, "/v1/debates/debate-nope/human").status == 404


def test_a_good_answer_is_handed_over_once(debate, home):
    with human_channel.Channel(debate, ASK) as channel, viewer(home, human=True) as (url, _):
        token = token_of(url, f"/debates/{debate.name}")
        assert token and len(token) >= 40
        body = json.dumps({"key": "round-1", "action": "agree", "participant": "skeptic",
                           "strength": 1})
        status, said = post(url, debate, body, token)
        assert status == 202, said
        assert said["delivered"]["participant"] == "skeptic"
        assert answers(debate) == ["answer-round-1.json"]
        assert channel.poll().participant == "skeptic"
        status, said = post(url, debate, SKIP, token)   # a second answer to the same question
        assert status == 409 and "has an answer already" in said["error"]


def test_each_viewer_run_has_its_own_token(debate, home):
    with viewer(home, human=True) as (url, _):
        first = token_of(url)
    with viewer(home, human=True) as (url, _):
        assert token_of(url) != first


@pytest.mark.parametrize("why, kwargs, status", [
    ("another site's page", {"origin": "http://evil.example"}, 403),
    ("an opaque origin", {"origin": "null"}, 403),
    ("no Origin at all", {"origin": None}, 403),
    ("the viewer's origin on another port", {"origin": "http://127.0.0.1:1"}, 403),
    ("no token", {"token": None}, 403),
    ("a wrong token", {"token": "guess"}, 403),
    ("a rebound name", {"host": "evil.example"}, 403),
])
def test_a_write_from_anywhere_but_the_page_is_refused(debate, home, why, kwargs, status):
    with human_channel.Channel(debate, ASK), viewer(home, human=True) as (url, _):
        args = {"token": token_of(url), **kwargs}
        if "host" in kwargs:
            args["host"] = kwargs["host"] + ":" + url.rstrip("/").rsplit(":", 1)[1]
        got, said = post(url, debate, SKIP, **args)
        assert got == status, why
        assert answers(debate) == [], why


@pytest.mark.parametrize("body, status, says", [
    ({"key": "round-0", "action": "skip"}, 409, "no open question 'round-0'"),
    ({"key": "round-1", "action": "vote"}, 400, "action must be one of"),
    ({"key": "round-1", "action": "agree", "participant": "mallory"}, 400, "participant"),
    ("not json", 400, "not JSON"),
])
def test_a_stale_or_invalid_answer_is_refused(debate, home, body, status, says):
    with human_channel.Channel(debate, ASK), viewer(home, human=True) as (url, _):
        raw = body if isinstance(body, str) else json.dumps(body)
        got, said = post(url, debate, raw, token_of(url))
        assert got == status and says in said["error"]
        assert answers(debate) == []


def test_no_question_open_is_a_conflict(debate, home):
    with viewer(home, human=True) as (url, _):
        got, said = post(url, debate, SKIP, token_of(url))
        assert got == 409 and said["error"] == "no question is open"
        assert not (debate / "human").exists()


def test_a_huge_body_is_refused(debate, home):
    with human_channel.Channel(debate, ASK), viewer(home, human=True) as (url, _):
        body = json.dumps({"key": "round-1", "action": "steer", "text": "x" * 100_000})
        got, _ = post(url, debate, body, token_of(url))
        assert got == 413 and answers(debate) == []


@pytest.mark.process
def test_the_command_with_human_serves_the_route(debate, home):
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "disputatio", "watch", "--no-open", "--port",
                             "0", "--human"], cwd=home, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ,
                                                                    "BROWSER": "false"})
    try:
        url = proc.stdout.readline().strip()
        with human_channel.Channel(debate, ASK) as channel:
            assert post(url, debate, SKIP, token_of(url))[0] == 202
            assert channel.poll().action == "skip"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "the page may answer the questions of debates run with --human" in err


# --- a real debate on a terminal, answered from the viewer ----------------------------------

@pytest.mark.process
def test_a_running_debate_answered_from_the_viewer(home):
    cfg = write_config(home / "d.yaml", [sim("ada"), sim("bob")], rounds=1)
    t = Terminal(["run", "Ship it?", "--config", str(cfg), "--human", "-q"], home)
    try:
        with viewer(home, human=True) as (url, _):
            t.expect(PROMPT)
            (debate,) = (home / ".debate").glob("debate-*")
            path = f"/v1/debates/{debate.name}/human"
            asked = wait_for(lambda: get(url, path).json()["question"], 10, "the question")
            assert asked["key"] == "round-0" and asked["participants"] == ["ada", "bob"]
            token = token_of(url, f"/debates/{debate.name}")
            body = json.dumps({"key": "round-0", "action": "agree", "participant": "bob",
                               "strength": 3})
            assert post(url, debate, body, token)[0] == 202
            t.expect("answered in the browser, recorded: agree with bob (strength 3 of 3)",
                     timeout=10)
            # round 1: the terminal answers first; the viewer's late answer is refused
            t.expect(PROMPT)
            wait_for(lambda: (get(url, path).json()["question"] or {}).get("key") == "round-1",
                     10, "round 1's question")
            t.type("k")
            t.expect("recorded: skip")
            wait_for(lambda: get(url, path).json()["question"] is None, 10, "the question gone")
            late = post(url, debate, json.dumps({"key": "round-1", "action": "skip"}), token)
            assert late[0] == 409
            code, out = t.finish()
    finally:
        t.close()
    assert code == 0, t.screen
    assert Path(out.strip()) == debate / "final-report.md"
    recorded = [e.data for e in ledger.load(debate / "events.jsonl") if e.type == "human_acted"]
    assert recorded == [
        {"key": "round-0", "round": 0, "action": "agree", "participant": "bob", "strength": 3,
         "text": ""},
        {"key": "round-1", "round": 1, "action": "skip", "text": ""}]
    assert not (debate / "human").exists()
