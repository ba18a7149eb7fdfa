"""What the hash chain proves, and what a signature over its head adds: a ledger whose ruling
was forged and whose hashes were recomputed still passes ``--verify`` (the chain guards against
accidents only), but not ``--verify --allowed-signers``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from disputatio import ledger, signing
from support import Ran, invoke, sim, wait_for, write_config

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None,
                                reason="ssh-keygen (OpenSSH) is not installed")


def keygen(path: Path, comment: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f",
                    str(path)], check=True, capture_output=True)
    return path


def allowed(path: Path, principal: str, key: Path) -> Path:
    pub = key.with_name(key.name + ".pub").read_text().strip()
    path.write_text(f'{principal} namespaces="{signing.NAMESPACE}" {pub}\n')
    return path


def alice(where: Path) -> SimpleNamespace:
    """A HOME with an ed25519 key where ssh keeps it, and a git config naming no signing key."""
    h = where / "h"
    key = keygen(h / ".ssh" / "id_ed25519", "alice@example.com")
    gitconfig = where / "gitconfig"
    gitconfig.write_text("")
    env = {"HOME": str(h), "GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1"}
    return SimpleNamespace(env=env, key=key,
                           allowed=allowed(where / "allowed", "alice@example.com", key))


@pytest.fixture
def user(home, tmp_path):
    """alice working in this test's home, with a key of this test's own to change."""
    return SimpleNamespace(cwd=home, **vars(alice(tmp_path)))


@pytest.fixture(scope="module")
def signer(tmp_path_factory) -> SimpleNamespace:
    """alice, for the debates she signs once in this module: her key and git config are
    never changed."""
    return alice(tmp_path_factory.mktemp("signer"))


@pytest.fixture
def signed(signer, home, finished) -> tuple[SimpleNamespace, Path]:
    """The signer working in this test's home, and a copy of the debate ``--demo --sign``
    made with her key."""
    return (SimpleNamespace(cwd=home, **vars(signer)),
            finished("--demo", "--sign", "-q", env=signer.env))


def cli(u, *args: str) -> Ran:
    return invoke(*args, cwd=u.cwd, env=u.env)


def folder(u) -> Path:
    return max((u.cwd / ".debate").glob("debate-*"))


def signed_demo(u) -> Path:
    r = cli(u, "--demo", "--sign", "-q")
    assert r.returncode == 0, r.stderr
    return folder(u)


def rechain(debate: Path, edit) -> None:
    """What a deliberate forger does: change events, recompute every hash after them and the
    head debate.json recorded, so that the chain verifies again."""
    path = debate / "events.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    events = edit(events)
    prev = ledger.GENESIS
    for seq, ev in enumerate(events, start=1):
        ev["seq"], ev["prev"] = seq, prev
        ev["hash"] = ledger.event_hash(seq, ev["ts"], ev["type"], ev["data"], prev)
        prev = ev["hash"]
    path.write_bytes(b"".join(ledger.canonical(ev) + b"\n" for ev in events))
    record = json.loads((debate / "debate.json").read_text())
    record["ledger"].update(events=len(events), head=prev)
    (debate / "debate.json").write_text(json.dumps(record))


def forge_ruling(events: list[dict]) -> list[dict]:
    ruling = next(e for e in events if e["type"] == "turn_completed"
                  and e["data"]["phase"] == "respondeo")
    ruling["data"]["text"] = ('Rewrite everything in Rust, at once.\n```json\n'
                              '{"status": "resolved", "findings": []}\n```')
    if "text_sha256" in ruling["data"]:   # the text is hashed through its digest
        ruling["data"]["text_sha256"] = ledger.text_digest(ruling["data"]["text"])
    return events


def verify(u, debate: Path, *extra: str) -> Ran:
    return cli(u, "--verify", "--debate", str(debate), *extra)


def test_a_signed_debate_verifies_against_its_signer(signed):
    user, debate = signed
    count = len(ledger.load(debate / "events.jsonl"))
    head = ledger.load(debate / "events.jsonl")[-1].hash
    assert (debate / "signatures" / f"{count}-{head}.sig").read_text().startswith(
        "-----BEGIN SSH SIGNATURE-----")
    plain = verify(user, debate)
    assert plain.returncode == 0
    assert plain.stderr.strip() == (f"ok {count} events; signed, but the signature was not "
                                    "checked (pass --allowed-signers FILE)")
    r = verify(user, debate, "--allowed-signers", str(user.allowed))
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == f"ok {count} events; head (seq {count}) signed by alice@example.com"


def test_a_forged_and_rechained_ruling_passes_the_chain_but_not_the_signature(signed):
    user, debate = signed
    rechain(debate, forge_ruling)
    plain = verify(user, debate)
    assert plain.returncode == 0, plain.stderr  # the limit of a hash chain, by design
    r = verify(user, debate, "--allowed-signers", str(user.allowed))
    assert r.returncode == 1
    count = len(ledger.load(debate / "events.jsonl"))
    assert r.stderr.strip() == (f"error: seq {count}: not the event that was signed (the ledger "
                                "was rewritten and re-chained); the current head is not signed")


def test_a_forged_ruling_without_rechaining_fails_both(signed):
    user, debate = signed
    path = debate / "events.jsonl"
    text = path.read_text()
    forged = text.replace("Measure first", "Rewrite it in Rust", 1)
    assert forged != text
    path.write_text(forged)
    for extra in ((), ("--allowed-signers", str(user.allowed))):
        r = verify(user, debate, *extra)
        assert r.returncode == 1 and "content does not match its hash" in r.stderr, r.stderr


def test_events_appended_after_the_last_signature_fail(signed):
    user, debate = signed
    count = len(ledger.load(debate / "events.jsonl"))
    ledger.Ledger(debate / "events.jsonl").append("finalize_requested", {})  # an unsigned writer
    assert verify(user, debate).returncode == 0
    r = verify(user, debate, "--allowed-signers", str(user.allowed))
    assert r.returncode == 1
    assert r.stderr.strip() == (f"error: seq {count + 1}: not signed; events {count + 1}-"
                                f"{count + 1} were appended after the last signature "
                                f"(seq {count})")


def test_a_ledger_cut_short_after_signing_fails(signed):
    user, debate = signed
    count = len(ledger.load(debate / "events.jsonl"))
    rechain(debate, lambda events: events[:-1])
    assert verify(user, debate).returncode == 0
    r = verify(user, debate, "--allowed-signers", str(user.allowed))
    assert r.returncode == 1
    assert r.stderr.strip() == (f"error: seq {count}: missing; seq {count} was signed (the "
                                "ledger was cut short after it was signed)")


def test_a_key_that_is_not_an_allowed_signer_fails(signed, tmp_path):
    user, debate = signed
    other = keygen(tmp_path / "other" / "id_ed25519", "mallory@example.com")
    r = verify(user, debate, "--allowed-signers",
               str(allowed(tmp_path / "allowed-other", "bob@example.com", other)))
    assert r.returncode == 1
    assert "signed by a key that is not in" in r.stderr and r.stderr.startswith("error: seq ")


def test_a_signature_file_swapped_for_another_heads_does_not_verify(signed):
    """A signature is over the message, not the file name: renaming another signature to the
    current head proves nothing."""
    user, debate = signed
    r = cli(user, "--finalize", "--debate", str(debate), "-q")  # signed again: the same key
    assert r.returncode == 0, r.stderr
    sigs = signing.signatures(debate)
    assert len(sigs) == 2
    (newest, _, new_path), (_, _, old_path) = sigs
    assert newest == len(ledger.load(debate / "events.jsonl"))
    assert verify(user, debate, "--allowed-signers", str(user.allowed)).returncode == 0
    new_path.write_bytes(old_path.read_bytes())
    r = verify(user, debate, "--allowed-signers", str(user.allowed))
    assert r.returncode == 1 and "the signature does not verify" in r.stderr, r.stderr


def test_a_key_from_the_config_and_no_key_at_all(user, tmp_path):
    key = keygen(tmp_path / "keys" / "debates", "carol@example.com")
    cfg = write_config(tmp_path / "d.yaml", [sim("a"), sim("b")], rounds=0, sign=str(key))
    r = cli(user, "q", "--config", str(cfg), "-q")
    assert r.returncode == 0, r.stderr
    carol = allowed(tmp_path / "allowed-carol", "carol@example.com", key)
    ok = verify(user, folder(user), "--allowed-signers", str(carol))
    assert ok.returncode == 0 and "signed by carol@example.com" in ok.stderr, ok.stderr
    assert verify(user, folder(user), "--allowed-signers", str(user.allowed)).returncode == 1

    user.key.unlink()
    before = sorted((user.cwd / ".debate").glob("debate-*"))
    r = cli(user, "--demo", "--sign", "-q")
    assert r.returncode == 2 and r.stdout == ""
    said = [ln for ln in r.stderr.splitlines() if not ln.startswith("warning: ")]
    assert len(said) == 1, r.stderr
    assert said[0].startswith(f"error: cannot sign the ledger: no SSH key at {user.key}")
    assert sorted((user.cwd / ".debate").glob("debate-*")) == before  # nothing was started


def test_an_unsigned_debate_is_not_signed(user, finished):
    finished("--demo", "-q")
    assert not (folder(user) / "signatures").exists()
    r = verify(user, folder(user), "--allowed-signers", str(user.allowed))
    assert r.returncode == 1
    assert r.stderr.strip() == f"error: not signed: no signature in {folder(user)}/signatures"


@pytest.mark.parametrize("args", [["--verify", "--sign"], ["--demo", "--allowed-signers", "x"],
                                  ["--verify", "--allowed-signers", "missing-file"]])
def test_signing_flags_where_they_do_not_apply(user, args):
    r = cli(user, *args)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("error: ")


@pytest.mark.process
def test_a_signature_that_cannot_be_made_fails_the_command(user, tmp_path):
    """A key that needs a passphrase, and no terminal to ask it on: the debate is done and
    kept, but the command fails, since the signature the user asked for is missing."""
    key = tmp_path / "locked" / "id_ed25519"
    key.parent.mkdir()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "a passphrase", "-f", str(key)],
                   check=True, capture_output=True)
    cfg = write_config(tmp_path / "d.yaml", [sim("a"), sim("b")], rounds=0, sign=str(key))
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "SSH_ASKPASS")}
    r = subprocess.run([sys.executable, "-m", "disputatio", "q", "--config", str(cfg), "-q"],
                       cwd=user.cwd, env={**env, **user.env, "SSH_ASKPASS_REQUIRE": "never"},
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                       start_new_session=True)  # no controlling terminal
    assert r.returncode == 1
    assert Path(r.stdout.strip()).name == "final-report.md"
    said = [ln for ln in r.stderr.splitlines() if not ln.startswith("warning: ")]
    assert len(said) == 1 and said[0].startswith(f"error: cannot sign the ledger with {key}: ")
    assert said[0].endswith("(the debate's own status: resolved)")
    assert not (folder(user) / "signatures").exists()
    assert verify(user, folder(user)).returncode == 0


def test_a_signed_debate_is_not_extended_from_a_forged_head(signed):
    """Signing on would vouch for the forgery: --finalize refuses a signed debate whose head its
    key did not sign, and adds nothing."""
    user, debate = signed
    rechain(debate, forge_ruling)
    before = (debate / "events.jsonl").read_bytes()
    r = cli(user, "--finalize", "--debate", str(debate), "-q")
    assert r.returncode == 1 and r.stdout == ""
    said = [ln for ln in r.stderr.splitlines() if not ln.startswith("warning: ")]
    assert len(said) == 1
    assert said[0].startswith(f"error: {debate / 'events.jsonl'}: the head is not the one "
                              f"{user.key} signed (seq ")
    assert said[0].endswith("refusing to add to it")
    assert (debate / "events.jsonl").read_bytes() == before
    assert len(signing.signatures(debate)) == 1


def test_the_default_key_is_the_one_git_signs_with(user, tmp_path):
    """With git set up to sign with SSH, --sign uses git's user.signingkey (its .pub form, as
    git users often write it), not ~/.ssh/id_ed25519."""
    key = keygen(tmp_path / "git-key" / "signing", "dave@example.com")
    Path(user.env["GIT_CONFIG_GLOBAL"]).write_text(
        f"[gpg]\n\tformat = ssh\n[user]\n\tsigningkey = {key}.pub\n")
    debate = signed_demo(user)
    assert (debate / "signatures" / "key").read_text().strip() == f"{key}.pub"
    dave = allowed(tmp_path / "allowed-dave", "dave@example.com", key)
    r = verify(user, debate, "--allowed-signers", str(dave))
    assert r.returncode == 0 and r.stderr.strip().endswith("signed by dave@example.com"), r.stderr
    assert verify(user, debate, "--allowed-signers", str(user.allowed)).returncode == 1


@pytest.mark.parametrize("content", ["not a key\n", ""])
def test_a_key_file_that_is_no_key_is_refused_before_the_debate(user, tmp_path, content):
    """A file that is no SSH key is found out before any turn runs, not after a whole debate
    was paid for."""
    key = tmp_path / "keys" / "broken"
    key.parent.mkdir()
    key.write_text(content)
    cfg = write_config(tmp_path / "d.yaml", [sim("a"), sim("b")], rounds=0, sign=str(key))
    r = cli(user, "q", "--config", str(cfg), "-q")
    assert r.returncode == 2 and r.stdout == "", r.stderr
    said = [ln for ln in r.stderr.splitlines() if not ln.startswith("warning: ")]
    assert len(said) == 1 and said[0].startswith(f"error: cannot sign the ledger: {key} is "), said
    assert not (user.cwd / ".debate").exists()


@pytest.mark.process
def test_a_debate_asked_to_be_signed_stays_signed_after_a_kill(user, tmp_path):
    """Killed with -9 before its first signature, a debate started with ``sign:`` is signed
    by the --resume that finishes it (no --sign needed), not left unsigned."""
    key = keygen(tmp_path / "keys" / "debates", "erin@example.com")
    slow = sim("a", DISPUTATIO_SIM_LATENCY=2)
    cfg = write_config(tmp_path / "d.yaml", [slow, sim("b")], rounds=0, sign=str(key))
    proc = subprocess.Popen([sys.executable, "-m", "disputatio", "q", "--config", str(cfg),
                             "-q"], cwd=user.cwd, env={**os.environ, **user.env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ledgers = user.cwd / ".debate"
        wait_for(lambda: any('"type":"turn_started"' in p.read_text()
                             for p in ledgers.glob("debate-*/events.jsonl")),
                 what="the first turn")
    finally:
        proc.kill()
        proc.wait()
    debate = folder(user)
    assert not signing.signatures(debate)
    r = cli(user, "--resume", "--debate", str(debate), "-q")
    assert r.returncode == 0, r.stderr
    erin = allowed(tmp_path / "allowed-erin", "erin@example.com", key)
    ok = verify(user, debate, "--allowed-signers", str(erin))
    assert ok.returncode == 0 and "signed by erin@example.com" in ok.stderr, ok.stderr
