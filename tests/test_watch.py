"""disputatio watch: the read-only API, the event streams and their resumption, the host guard,
the page's policy, and the command as its own process (URL on stdout, Ctrl-C stops it)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from datetime import datetime

import pytest

from disputatio import ledger
from disputatio.render import html
from disputatio.watch import page
from support import invoke
from support.watching import Stream, add_turn, append_elsewhere, get, make_debate, viewer


@pytest.fixture
def debate(home):
    d = make_debate(home)
    add_turn(d / "events.jsonl", "advocate", "Yes: <b>measure</b> first.")
    add_turn(d / "events.jsonl", "skeptic", "No.")
    return d


def test_importing_the_cli_does_not_import_the_server_library():
    code = ("import sys, disputatio.cli; "
            "print([m for m in sys.modules if m.split('.')[0] in "
            "('starlette', 'uvicorn', 'anyio', 'h11', 'disputatio.watch')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


# --- the API -------------------------------------------------------------------------------

def test_the_list_a_debate_and_its_events(debate, home):
    with viewer(home) as (url, _):
        listed = get(url, "/v1/debates")
        assert listed.status == 200 and listed.headers["content-type"] == "application/json"
        [entry] = listed.json()["debates"]
        assert entry["id"] == debate.name and entry["quaestio"] == "Should we?"
        assert entry["participants"] == ["advocate", "skeptic"]
        one = get(url, f"/v1/debates/{debate.name}").json()
        assert one["events"] == 5
        assert [(t["turn_id"], t["text"]) for t in one["turns"]] == [
            ("proposal/advocate", "Yes: <b>measure</b> first."), ("proposal/skeptic", "No.")]
        everything = get(url, f"/v1/debates/{debate.name}/events").json()
        assert [e["seq"] for e in everything["events"]] == [1, 2, 3, 4, 5]
        assert everything["next"] is None
        assert everything["events"][2]["title"] == "Proposal"   # the protocol's own title
        assert everything["events"][2]["hue"] == html.hue("advocate")   # the report's colour
        after = get(url, f"/v1/debates/{debate.name}/events?after=3").json()
        assert [e["seq"] for e in after["events"]] == [4, 5]
        on_disk = ledger.load(debate / "events.jsonl")[4]
        assert after["events"][1]["data"] == on_disk.data


@pytest.mark.parametrize("path, status", [
    ("/v1/debates/debate-nope", 404), ("/v1/debates/..", 404),
    ("/v1/debates/debate-20261201T100000Z/events?after=-1", 400),
    ("/v1/debates/debate-20261201T100000Z/events?after=x", 400),
    ("/v1/debates/%2e%2e%2fetc/events", 404), ("/nothing", 404),
])
def test_what_is_not_there_or_not_a_seq(debate, home, path, status):
    with viewer(home) as (url, _):
        assert get(url, path).status == status


def test_nothing_writes(debate, home):
    with viewer(home) as (url, _):
        for path in ("/v1/debates", f"/v1/debates/{debate.name}", "/"):
            for method in ("POST", "PUT", "DELETE", "PATCH"):
                assert get(url, path, method=method).status == 405, (method, path)


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1:1",
                                  "localhost", "127.0.0.2:{port}", "0.0.0.0:{port}", ""])
def test_another_host_is_refused(debate, home, host):
    with viewer(home) as (url, _):
        port = url.rstrip("/").rsplit(":", 1)[1]
        got = get(url, f"/v1/debates/{debate.name}", host=host.format(port=port))
        assert got.status == 403
        assert got.body.startswith(b"error: ") and b"Should we" not in got.body
        assert get(url, "/v1/debates", host=f"localhost:{port}").status == 200


def test_the_page_runs_only_its_own_script(debate, home):
    with viewer(home) as (url, _):
        for path in ("/", f"/debates/{debate.name}"):
            got = get(url, path)
            assert got.status == 200 and got.body.decode() == page.HTML
            csp = got.headers["content-security-policy"]
            assert "default-src 'none'" in csp and "connect-src 'self'" in csp
            assert page.CSP == csp and "'unsafe-inline'" not in csp
            assert got.headers["x-content-type-options"] == "nosniff"
    assert "innerHTML" not in page.SCRIPT and "insertAdjacentHTML" not in page.SCRIPT
    assert "document.write" not in page.SCRIPT and "eval(" not in page.SCRIPT


# --- the streams ---------------------------------------------------------------------------

def test_a_stream_sends_every_event_then_what_is_appended(debate, home):
    events = debate / "events.jsonl"
    with viewer(home) as (url, _):
        stream = Stream(url, f"/v1/debates/{debate.name}/stream")
        try:
            assert stream.seqs_until(5) == [1, 2, 3, 4, 5]
            add_turn(events, "pragmatist", "Both, in order.")
            got = list(zip(range(2), stream.events(), strict=False))
            assert [(seq, kind) for _, (seq, kind, _) in got] == [(6, "ledger"), (7, "ledger")]
            assert got[1][1][2]["data"]["text"] == "Both, in order."
        finally:
            stream.close()


def test_last_event_id_resumes_after_it(debate, home):
    with viewer(home) as (url, _):
        stream = Stream(url, f"/v1/debates/{debate.name}/stream", last_id=3)
        try:
            assert stream.seqs_until(5) == [4, 5]
        finally:
            stream.close()
        stream = Stream(url, f"/v1/debates/{debate.name}/stream?after=4")
        try:
            assert stream.seqs_until(5) == [5]
        finally:
            stream.close()


def test_turns_appended_by_another_process_arrive_within_2s(debate, home):
    with viewer(home) as (url, _):
        stream = Stream(url, f"/v1/debates/{debate.name}/stream", last_id=5)
        try:
            writer = append_elsewhere(debate / "events.jsonl", 3, delay=0.1)
            arrived = []
            for seq, _, _ in stream.events():
                arrived.append((seq, time.time()))
                if seq == 11:
                    break
            assert writer.wait(10) == 0
        finally:
            stream.close()
    assert [s for s, _ in arrived] == [6, 7, 8, 9, 10, 11]
    written = {e.seq: e.ts for e in ledger.load(debate / "events.jsonl")}
    for seq, when in arrived:
        at = datetime.fromisoformat(written[seq].replace("Z", "+00:00")).timestamp()
        assert when - at < 2.0, f"seq {seq} took {when - at:.2f} s"


def test_a_redaction_reaches_the_api_and_the_stream(debate, home):
    from disputatio.redaction import redact

    with viewer(home) as (url, _):
        stream = Stream(url, f"/v1/debates/{debate.name}/stream")
        try:
            assert stream.seqs_until(5) == [1, 2, 3, 4, 5]
            redact(debate, "proposal/advocate", "a name", who="tester")
            seq, _, body = next(stream.events())
            assert seq == 6 and body["type"] == "turn_redacted"
            assert body["data"]["target"] == 3 and body["data"]["tombstone"] == \
                "[REDACTED: a name]"
        finally:
            stream.close()
        turns = get(url, f"/v1/debates/{debate.name}").json()["turns"]
        assert turns[0]["text"] == "[REDACTED: a name]"
        everything = json.dumps(get(url, f"/v1/debates/{debate.name}/events").json())
        assert "measure" not in everything


# --- the command ---------------------------------------------------------------------------

def _start(home, *args: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "disputatio", "watch", "--no-open", *args],
                            cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "BROWSER": "false"})
    return proc, proc.stdout.readline().strip()


@pytest.mark.process
def test_the_command_prints_its_url_and_stops_on_ctrl_c_with_a_stream_open(debate, home):
    proc, url = _start(home, "--port", "0")
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        assert get(url, "/v1/debates").status == 200
        stream = Stream(url, f"/v1/debates/{debate.name}/stream")
        assert stream.seqs_until(5) == [1, 2, 3, 4, 5]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
        stream.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and err.strip().endswith("the viewer stopped")
    assert out == ""


@pytest.mark.process
@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="reads Linux's socket table")
def test_the_viewer_listens_on_loopback_only(debate, home):
    proc, url = _start(home, "--port", "0")
    try:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        # every socket listening on the port, from the kernel's own table (hex address:port)
        rows = [line.split() for name in ("/proc/net/tcp", "/proc/net/tcp6")
                if os.path.exists(name) for line in open(name).read().splitlines()[1:]]
        bound = [r[1] for r in rows if r[3] == "0A" and int(r[1].split(":")[1], 16) == port]
        assert bound == [f"0100007F:{port:04X}"]   # 127.0.0.1, and nothing else
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
    assert proc.returncode == 0


def test_a_port_in_use_is_one_line_and_exit_2(home):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        ran = invoke("watch", "--no-open", "--port", str(taken.getsockname()[1]), cwd=home)
    finally:
        taken.close()
    assert ran.returncode == 2 and ran.stdout == ""
    assert ran.stderr.startswith("error: cannot listen on 127.0.0.1:")
    assert ran.stderr.count("\n") == 1 and "--port" in ran.stderr


@pytest.mark.parametrize("args, says", [
    (("--home", "/nonexistent/place"), "error: /nonexistent/place: no such directory (--home)"),
    (("--port", "70000"), "error: Invalid value for '--port'"),
])
def test_bad_options_are_one_line_and_exit_2(home, args, says):
    ran = invoke("watch", "--no-open", *args, cwd=home)
    assert ran.returncode == 2 and ran.stdout == ""
    assert ran.stderr.startswith(says) and ran.stderr.count("\n") == 1


@pytest.mark.process
def test_without_no_open_the_browser_is_given_the_url(debate, home, tmp_path):
    seen = tmp_path / "opened"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {seen}\n')
    browser.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "disputatio", "watch", "--port", "0"],
                            cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "BROWSER": f"{browser} %s"})
    try:
        url = proc.stdout.readline().strip()
        deadline = time.monotonic() + 10
        while not seen.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen.read_text() == url
        assert get(url, "/").status == 200
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=10)
    assert proc.returncode == 0
