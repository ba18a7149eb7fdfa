"""disputatio redact: a turn's text replaced by a tombstone in the ledger, every artifact and
raw/, with the chain still verifying and every other byte still covered by it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from disputatio import ledger, redaction
from disputatio.events import TurnCompleted
from support import invoke, one_path, run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "ledgers"
REASON = "quoted a customer by name"
TOMB = f"[REDACTED: {REASON}]"


@pytest.fixture
def demo(finished) -> Path:
    return finished("--demo", "Should we rewrite the backend in Rust?", "-q")


def text_of(debate: Path, turn_id: str) -> tuple[int, str]:
    for ev in ledger.load(debate / "events.jsonl"):
        if ev.type == "turn_completed" and ev.data["turn_id"] == turn_id:
            return ev.seq, ev.data["text"]
    raise AssertionError(turn_id)


def every_file(debate: Path) -> dict[str, str]:
    return {str(p.relative_to(debate)): p.read_text(encoding="utf-8", errors="replace")
            for p in debate.rglob("*") if p.is_file()}


def lines_of(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()
            if len(line.strip()) >= redaction.SCRUB_MIN]


# --- the chain ---------------------------------------------------------------------------

def test_a_turn_commits_to_its_text_through_its_digest(tmp_path):
    led = ledger.Ledger(tmp_path / "events.jsonl")
    ev = led.append(TurnCompleted.TYPE, TurnCompleted(
        turn_id="proposal/a", role="a", phase="proposal", round=0, ok=True,
        text="the secret plan").to_data())
    assert ev.data["text_sha256"] == ledger.text_digest("the secret plan")
    # the hash is the same whatever the text: the digest stands for it
    assert ev.hash == ledger.event_hash(ev.seq, ev.ts, ev.type, {**ev.data, "text": "x"},
                                        ev.prev)
    assert ledger.verify(led.path) == (True, "ok 1 events")
    ledger.rewrite_text(led.path, 1, "[REDACTED: no]")   # no redaction event vouches for it
    ok, why = ledger.verify(led.path)
    assert not ok and why.startswith("seq 1: content does not match its hash")


def test_old_ledgers_verify_unchanged_and_cannot_be_redacted(home):
    for fixture in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        events = (fixture / "events.jsonl").read_bytes()
        assert ledger.verify(fixture / "events.jsonl")[0], fixture.name
        assert b"text_sha256" not in events
    debate = home / ".debate" / "debate-20261101T100000Z"
    shutil.copytree(FIXTURES / "v0.1.0-e26cab3", debate)
    before = (debate / "events.jsonl").read_bytes()
    ran = invoke("redact", str(debate), "proposal/advocate", "--reason", REASON, cwd=home)
    assert ran.returncode == 2
    assert ran.stderr.startswith("error: ") and ran.stderr.count("\n") == 1
    assert "before turn texts were committed by digest" in ran.stderr
    assert (debate / "events.jsonl").read_bytes() == before


def test_redact_keeps_every_hash_and_verify_green(demo, home, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    (tmp_path / ".gitconfig").write_text("[user]\n\tname = Tester\n\temail = t@example.com\n")
    path = demo / "events.jsonl"
    hashes = [e.hash for e in ledger.load(path)]
    seq, text = text_of(demo, "proposal/skeptic")
    ran = invoke("redact", demo.name, "proposal/skeptic", "--reason", REASON, cwd=home)
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.startswith("redacted 1 event(s) of proposal/skeptic")
    after = ledger.load(path)
    # a signature over any earlier head still covers the same events
    assert [e.hash for e in after[:len(hashes)]] == hashes
    assert after[seq - 1].data["text"] == TOMB
    last = after[-1]
    assert last.type == "turn_redacted"
    assert last.data["target"] == seq and last.data["reason"] == REASON
    assert last.data["removed_sha256"] == ledger.text_digest(text)
    assert last.data["by"] == "Tester <t@example.com>"
    assert invoke("verify", "--debate", str(demo), cwd=home).returncode == 0


def test_the_text_is_gone_from_every_rendering_and_from_raw(demo, home):
    seq, text = text_of(demo, "proposal/skeptic")
    raw_stem = next(e.data["raw_stem"] for e in ledger.load(demo / "events.jsonl")
                    if e.seq == seq)
    assert (demo / "raw" / f"{raw_stem}.stdout").exists()
    mine = lines_of(text)
    others = {line for ev in ledger.load(demo / "events.jsonl")
              if ev.type == "turn_completed" and ev.seq != seq
              for line in lines_of(ev.data["text"])}
    own = [line for line in mine if line not in others]   # words only this turn said
    assert own, "the skeptic's answer has lines of its own"
    assert any(own[0] in body for body in every_file(demo).values())
    assert invoke("redact", demo.name, "proposal/skeptic", "--reason", REASON,
                  cwd=home).returncode == 0
    files = every_file(demo)
    for name, body in files.items():
        for line in own:
            assert line not in body, f"{name} still holds {line!r}"
    assert not (demo / "raw" / f"{raw_stem}.stdout").exists()
    assert (demo / "raw" / f"{raw_stem}.prompt.md").exists()   # its prompt was not its text
    assert TOMB in files["debate.md"]
    turns = {t["turn_id"]: t for t in json.loads(files["debate.json"])["turns"]}
    assert turns["proposal/skeptic"]["ok"] is True
    shown = invoke("show", demo.name, "--format", "html", cwd=home)
    assert shown.returncode == 0 and TOMB in shown.stdout
    assert not any(line in shown.stdout for line in own)


def test_tampering_after_a_redaction_is_still_caught(demo, home):
    assert invoke("redact", demo.name, "proposal/skeptic", "--reason", REASON,
                  cwd=home).returncode == 0
    path = demo / "events.jsonl"
    good = path.read_text()

    def verify_after(old: str, new: str) -> str:
        assert old in good
        path.write_text(good.replace(old, new, 1))
        ran = invoke("verify", "--debate", str(demo), cwd=home)
        path.write_text(good)
        assert ran.returncode == 1, ran.stderr
        return ran.stderr

    # the redaction event's own words
    assert "content does not match its hash" in verify_after(f'"reason":"{REASON}"',
                                                             '"reason":"none given"')
    # the tombstone in the redacted event, no longer the one the redaction vouched for
    assert "no turn_redacted event vouches" in verify_after(
        f'"text":"{TOMB}"', '"text":"[REDACTED: something else]"')
    # a text that was not redacted, edited in place
    _, other = text_of(demo, "proposal/advocate")
    first = json.dumps(other.splitlines()[0])[1:-1]
    assert "content does not match its hash" in verify_after(first, first + " (edited)")
    assert invoke("verify", "--debate", str(demo), cwd=home).returncode == 0


def test_a_redaction_cut_short_is_finished_by_running_it_again(demo, home):
    """The event is appended before the text is replaced: a crash in between leaves a ledger
    that verifies, with the text intact, and the command finishes the job."""
    seq, text = text_of(demo, "proposal/advocate")
    led = ledger.Ledger(demo / "events.jsonl")
    led.append("turn_redacted", {"target": seq, "turn_id": "proposal/advocate",
                                 "removed_sha256": ledger.text_digest(text),
                                 "tombstone": "[REDACTED: first try]", "reason": "first try",
                                 "by": "someone"})
    from disputatio import folder, views

    events = ledger.load(led.path)
    folder.write(demo, events, *views.status(events))
    assert invoke("verify", "--debate", str(demo), cwd=home).returncode == 0
    ran = invoke("redact", demo.name, "proposal/advocate", "--reason", REASON, cwd=home)
    assert ran.returncode == 0, ran.stderr
    events = ledger.load(demo / "events.jsonl")
    assert [e.type for e in events].count("turn_redacted") == 1   # not a second one
    assert events[seq - 1].data["text"] == "[REDACTED: first try]"
    assert invoke("verify", "--debate", str(demo), cwd=home).returncode == 0


@pytest.mark.parametrize("args, says", [
    (("proposal/nobody", "--reason", REASON), "no turn 'proposal/nobody'; its turns are"),
    (("proposal/skeptic", "--reason", "   "), "--reason must say why"),
])
def test_bad_input_is_one_line_and_exit_2(demo, home, args, says):
    before = (demo / "events.jsonl").read_bytes()
    ran = invoke("redact", demo.name, *args, cwd=home)
    assert ran.returncode == 2
    assert ran.stderr.startswith("error: ") and says in ran.stderr
    assert ran.stderr.count("\n") == 1
    assert (demo / "events.jsonl").read_bytes() == before


def test_twice_is_refused(demo, home):
    assert invoke("redact", demo.name, "proposal/skeptic", "--reason", REASON,
                  cwd=home).returncode == 0
    ran = invoke("redact", demo.name, "proposal/skeptic", "--reason", "again", cwd=home)
    assert ran.returncode == 2 and "no text to redact (already redacted" in ran.stderr


def test_a_debate_another_process_writes_is_refused(demo, home):
    from disputatio.ledger import WriterLock

    with WriterLock(demo, "run"):
        ran = invoke("redact", demo.name, "proposal/skeptic", "--reason", REASON, cwd=home)
    assert ran.returncode == 75 and "is in use by disputatio" in ran.stderr


@pytest.mark.process
def test_as_its_own_process(demo, home):
    seq, _ = text_of(demo, "respondeo-1")
    ran = run_cli("redact", str(demo), str(seq), "--reason", REASON, cwd=home)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == str(demo / "final-report.md")
    assert text_of(demo, "respondeo-1")[1] == TOMB
    assert TOMB in (demo / "respondeo.md").read_text()
    check = run_cli("verify", "--debate", str(demo), cwd=home)
    assert check.returncode == 0 and check.stderr.startswith("ok "), check.stderr


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_a_signed_debate_stays_signed_and_its_earlier_signature_still_holds(home, tmp_path):
    """The redaction changes no hash: the signature made over the head before it still
    verifies against that head, and the new head is signed by the same key."""
    import subprocess

    from disputatio import signing

    h = tmp_path / "h"
    (h / ".ssh").mkdir(parents=True)
    key = h / ".ssh" / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f",
                    str(key)], check=True, capture_output=True)
    trusted = tmp_path / "allowed"
    trusted.write_text(f'alice namespaces="{signing.NAMESPACE}" '
                       f'{key.with_name("id_ed25519.pub").read_text().strip()}\n')
    (tmp_path / "gitconfig").write_text("")
    env = {"HOME": str(h), "GIT_CONFIG_GLOBAL": str(tmp_path / "gitconfig"),
           "GIT_CONFIG_NOSYSTEM": "1"}
    ran = invoke("--demo", "Q?", "--sign", "-q", cwd=home, env=env)
    assert ran.returncode == 0, ran.stderr
    demo = one_path(ran.stdout).parent
    before = sorted(p.name for p in (demo / "signatures").glob("*.sig"))
    ran = invoke("redact", demo.name, "proposal/skeptic", "--reason", REASON, cwd=home, env=env)
    assert ran.returncode == 0, ran.stderr
    events = ledger.load(demo / "events.jsonl")
    after = sorted(p.name for p in (demo / "signatures").glob("*.sig"))
    assert set(before) < set(after)
    assert f"{len(events)}-{events[-1].hash}.sig" in after
    for name in before:   # the old signatures name heads that are still in the chain
        count, head = name.removesuffix(".sig").split("-")
        assert events[int(count) - 1].hash == head
    ok = invoke("verify", "--debate", str(demo), "--allowed-signers", str(trusted),
                cwd=home, env=env)
    assert ok.returncode == 0, ok.stderr
