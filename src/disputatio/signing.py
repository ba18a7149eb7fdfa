"""Signatures over the ledger's head: what the hash chain alone cannot prove.

Anyone who can write ``events.jsonl`` can edit an event and recompute every hash after it. A
signature by the user's SSH key over the head (``ssh-keygen -Y sign``, the mechanism git uses
for signed commits) cannot be recomputed without that key, and the head covers every event
before it. After each command that appended, the head is signed into
``signatures/<events>-<head>.sig``; the signed message is small and canonical::

    disputatio-ledger
    events N
    head H

``check`` then proves, against an allowed-signers file, that the head the ledger has *now* was
signed by one of those keys; a forged event, a re-chained ledger, events appended after the
last signature and a ledger cut short after it each fail with one line saying which.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

NAMESPACE = "disputatio-ledger"
SIG_DIR = "signatures"
KEY_FILE = "key"  # which key signed this debate, so later commands sign with it too
_NAME = re.compile(r"^(\d+)-([0-9a-f]{64})\.sig$")
_PRINCIPAL = "disputatio-signer"


class SigningError(Exception):
    """Signing or checking could not be done at all (no ssh-keygen, no key): one line."""


def message(count: int, head: str) -> bytes:
    return f"{NAMESPACE}\nevents {count}\nhead {head}\n".encode()


def resolve_key(choice: bool | str | None, debate_dir: Path | None = None) -> str | None:
    """The key to sign with, checked before anything is spent; None: do not sign.

    A debate that was signed before goes on being signed with the key it used, asked or not.
    Otherwise ``True`` means the user's default: git's ``user.signingkey`` when ``gpg.format``
    is ``ssh`` (as ``git commit -S`` would use it), else ``~/.ssh/id_ed25519``; a path names a
    key.
    """
    recorded = debate_dir / SIG_DIR / KEY_FILE if debate_dir else None
    if recorded is not None and recorded.is_file():
        key = recorded.read_text().strip()
    elif choice is None or choice is False:
        return None
    elif choice is True:
        key = _git_signing_key() or str(Path.home() / ".ssh" / "id_ed25519")
    else:
        key = str(choice)
    _ssh_keygen()
    if not key.startswith("key::"):
        key = str(Path(key).expanduser().resolve())
        if not Path(key).is_file():
            raise SigningError(f"cannot sign the ledger: no SSH key at {key} (create one with "
                               "ssh-keygen -t ed25519, or name one with 'sign: PATH')")
        _readable_key(key)
    return key


def _readable_key(key: str) -> None:
    """A file that is no key would only fail at the first signature, after the turns ran.
    ``-l`` reads the public half, which needs no passphrase (it is stored in the clear)."""
    try:
        proc = subprocess.run([_ssh_keygen(), "-l", "-f", key], capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SigningError(f"cannot sign the ledger: cannot read {key}: {exc}") from None
    if proc.returncode != 0:
        raise SigningError(f"cannot sign the ledger: {key} is not an SSH key "
                           f"ssh-keygen can read ({_last_line(proc)})")


def sign(debate_dir: Path, count: int, head: str, key: str) -> Path:
    """Sign the head; the signature lands next to the ledger."""
    with tempfile.TemporaryDirectory(prefix="disputatio-sign-") as tmp:
        key_path = key
        if key.startswith("key::"):  # git's literal public key: the private half is in the agent
            key_path = os.path.join(tmp, "key.pub")
            Path(key_path).write_text(key[len("key::"):] + "\n")
        proc = _run([_ssh_keygen(), "-Y", "sign", "-f", key_path, "-n", NAMESPACE],
                    message(count, head))
    if proc.returncode != 0 or b"BEGIN SSH SIGNATURE" not in proc.stdout:
        raise SigningError(f"cannot sign the ledger with {key}: {_last_line(proc)}")
    folder = debate_dir / SIG_DIR
    folder.mkdir(exist_ok=True)
    path = folder / f"{count}-{head}.sig"
    tmp_path = folder / f".{path.name}.tmp"
    tmp_path.write_bytes(proc.stdout)
    os.replace(tmp_path, path)
    (folder / KEY_FILE).write_text(key + "\n")
    return path


def signatures(debate_dir: Path) -> list[tuple[int, str, Path]]:
    """``(events, head, file)`` of every signature, newest (most events) first."""
    folder = debate_dir / SIG_DIR
    found = []
    for p in folder.iterdir() if folder.is_dir() else ():
        m = _NAME.match(p.name)
        if m:
            found.append((int(m[1]), m[2], p))
    return sorted(found, key=lambda s: s[0], reverse=True)


def note(debate_dir: Path) -> str:
    """For a plain ``--verify``: say that a signature exists but was not checked."""
    if not signatures(debate_dir):
        return ""
    return "; signed, but the signature was not checked (pass --allowed-signers FILE)"


def check(debate_dir: Path, hashes: list[str], allowed: Path) -> tuple[bool, str]:
    """Does a key in ``allowed`` vouch for the ledger's current head? ``hashes`` are the
    verified chain's hashes in seq order. ``(True, 'head signed by P')`` or
    ``(False, 'what is wrong')``."""
    count, head = len(hashes), hashes[-1] if hashes else ""
    sigs = signatures(debate_dir)
    if not sigs:
        return False, f"not signed: no signature in {debate_dir / SIG_DIR}"
    current = [path for n, h, path in sigs if n == count and h == head]
    if current:
        results = [_check_one(path, count, head, allowed) for path in current]
        ok, what = next((r for r in results if r[0]), results[0])
        return ok, f"head (seq {count}) signed by {what}" if ok else f"seq {count}: {what}"
    n, signed_head, _ = sigs[0]
    if n > count:
        return False, (f"seq {count + 1}: missing; seq {n} was signed (the ledger was cut short "
                       "after it was signed)")
    if n and hashes[n - 1] == signed_head:
        return False, (f"seq {n + 1}: not signed; events {n + 1}-{count} were appended after "
                       f"the last signature (seq {n})")
    return False, (f"seq {n}: not the event that was signed (the ledger was rewritten and "
                   "re-chained); the current head is not signed")


def check_own(debate_dir: Path, hashes: list[str], key: str) -> tuple[bool, str]:
    """Before a signed debate is extended and signed again: was its current head signed with
    this very key? Otherwise the next signature would vouch for whatever was forged since."""
    with tempfile.TemporaryDirectory(prefix="disputatio-sign-") as tmp:
        allowed = Path(tmp) / "allowed_signers"
        allowed.write_text(f'{_PRINCIPAL} namespaces="{NAMESPACE}" {_public_key(key)}\n')
        ok, what = check(debate_dir, hashes, allowed)
    return ok, what.replace(str(allowed), key)


def _public_key(key: str) -> str:
    """The public half: git's literal, the ``.pub`` file, or derived from the private key."""
    if key.startswith("key::"):
        return key[len("key::"):].strip()
    path = Path(key)
    pub = path if path.suffix == ".pub" else path.with_name(path.name + ".pub")
    if pub.is_file():
        return pub.read_text().strip()
    proc = subprocess.run([_ssh_keygen(), "-y", "-f", key], capture_output=True)
    if proc.returncode != 0:
        raise SigningError(f"cannot read the public half of {key}: {_last_line(proc)}")
    return proc.stdout.decode().strip()


def _check_one(sig: Path, count: int, head: str, allowed: Path) -> tuple[bool, str]:
    keygen = _ssh_keygen()
    found = _run([keygen, "-Y", "find-principals", "-s", str(sig), "-f", str(allowed)], b"")
    principals = found.stdout.decode(errors="replace").split()
    if found.returncode != 0 or not principals:
        return False, f"signed by a key that is not in {allowed}"
    for principal in principals:
        proc = _run([keygen, "-Y", "verify", "-f", str(allowed), "-I", principal,
                     "-n", NAMESPACE, "-s", str(sig)], message(count, head))
        if proc.returncode == 0:
            return True, principal
    return False, f"the signature does not verify ({_last_line(proc)})"


def _git_signing_key() -> str | None:
    """git's SSH signing key, if git is set up to sign with SSH (else the value is a GPG id)."""
    git = shutil.which("git")
    if git is None:
        return None

    def get(name: str) -> str:
        try:
            out = subprocess.run([git, "config", "--get", name], capture_output=True,
                                 stdin=subprocess.DEVNULL, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return out.stdout.decode(errors="replace").strip() if out.returncode == 0 else ""

    if get("gpg.format") != "ssh":
        return None
    return get("user.signingkey") or None


def _ssh_keygen() -> str:
    found = shutil.which("ssh-keygen")
    if found is None:
        raise SigningError("cannot sign or check signatures: ssh-keygen is not installed "
                           "(it comes with OpenSSH)")
    return found


def _run(argv: list[str], stdin: bytes) -> subprocess.CompletedProcess:
    # no timeout: a key with a passphrase asks for it on the terminal
    return subprocess.run(argv, input=stdin, capture_output=True)


def _last_line(proc: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in proc.stderr.decode(errors="replace").splitlines() if ln.strip()]
    return lines[-1].strip() if lines else f"ssh-keygen exited {proc.returncode}"
