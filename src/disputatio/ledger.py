"""``events.jsonl``: the debate's single source of truth, and the lock of its one writer.

Append-only, one JSON event per line, flushed and fsynced as it happens. Every other file in the
debate folder is a view rendered from it.

The hash chain proves what happens *by accident*: a corrupted or torn line, events lost or
reordered, a ledger cut short (against the event count and head that ``debate.json`` recorded).
It proves nothing against someone who edits an event on purpose: anyone can recompute every hash
after the edit (and update ``debate.json``), and the chain verifies again. Only a signature over
the head by a key the forger does not hold proves more (``signing.py``, ``--sign``).

A turn's text is covered through its sha256 (``committed``), so ``disputatio redact`` can
replace it by a tombstone without changing any hash; ``verify`` accepts a text that is not its
digest's only when a later ``turn_redacted`` event vouches for exactly that tombstone.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

GENESIS = "0" * 64
# An event whose data holds TEXT_DIGEST commits to its "text" through that digest, not the text
# itself: the hash stays the same when a redaction replaces the text by a tombstone, and
# ``verify`` checks the text against the digest instead (see ``event_hash``).
TEXT, TEXT_DIGEST = "text", "text_sha256"
REDACTED = "turn_redacted"


class LedgerError(Exception):
    """The ledger cannot be read: it names the file and line."""


class Busy(Exception):
    """Another process is writing this debate: one line naming it."""


LOCK_FILE = ".lock"


class WriterLock:
    """One writer per debate folder: an exclusive ``flock`` on ``<debate>/.lock``, held from
    before the first append until the artifacts are written.

    A kernel lock, so nothing is ever stale: it goes with the last descriptor of its holder,
    whether that process exits, is killed with -9 or the machine loses power. The attempt never
    waits (a second writer is refused at once, ``Busy``); the file only carries the holder's pid
    and start time for that message. Its descriptor is close-on-exec, so agents do not inherit
    the lock and cannot keep it past their debate.
    """

    def __init__(self, debate_dir: Path, command: str):
        self.path = debate_dir / LOCK_FILE
        self.command = command
        self._fd: int | None = None

    def __enter__(self) -> WriterLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise Busy(f"{self.path.parent} is in use by disputatio ({holder}); wait for it, "
                       "or stop it and finish the debate with disputatio resume --debate "
                       f"{self.path.parent}") from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, canonical({"pid": os.getpid(), "started": _now(),
                                 "command": self.command}) + b"\n", 0)
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)  # no stale owner for the next reader to name
            os.close(self._fd)          # releases the lock
            self._fd = None


def _read_holder(fd: int) -> str:
    """Who holds the lock, as the holder wrote it (it writes right after taking the lock, so a
    reader may come too early and find nothing yet)."""
    try:
        obj = json.loads(os.pread(fd, 4096, 0))
        return f"pid {int(obj['pid'])}, started {obj['started']} with {obj['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "pid unknown: it has only just started"


@dataclass(frozen=True)
class Event:
    seq: int
    ts: str
    type: str
    data: dict[str, Any]
    prev: str
    hash: str


def canonical(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def committed(data: dict[str, Any]) -> dict[str, Any]:
    """What an event's hash covers of its data: all of it, except a text that comes with its
    digest (the digest is covered instead). Ledgers from before digests hash every field."""
    if isinstance(data.get(TEXT_DIGEST), str):
        return {k: v for k, v in data.items() if k != TEXT}
    return data


def event_hash(seq: int, ts: str, type_: str, data: dict, prev: str) -> str:
    body = {"seq": seq, "ts": ts, "type": type_, "data": committed(data), "prev": prev}
    return hashlib.sha256(canonical(body)).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Ledger:
    """An open ledger. ``append`` is thread-safe: turns finish in parallel."""

    def __init__(self, path: Path, clock=_now):
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        if path.exists():
            _mend_tail(path)
        self.events: list[Event] = load(path) if path.exists() else []

    @property
    def last_hash(self) -> str:
        return self.events[-1].hash if self.events else GENESIS

    def append(self, type_: str, data: dict[str, Any]) -> Event:
        with self._lock:
            seq = len(self.events) + 1
            ts = self._clock()
            prev = self.last_hash
            ev = Event(seq, ts, type_, data, prev, event_hash(seq, ts, type_, data, prev))
            line = canonical({"seq": seq, "ts": ts, "type": type_, "data": data, "prev": prev,
                              "hash": ev.hash}) + b"\n"
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
            self.events.append(ev)
            return ev


def load(path: Path) -> list[Event]:
    """Every event. A final line without its newline that does not parse is a crash in the
    middle of an append and is skipped; any other line that is not an event is an error."""
    events: list[Event] = []
    with open(path, "rb") as fh:
        lines = fh.read().split(b"\n")
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        event = _parse(raw)
        if event is None:
            if n == len(lines):
                break  # torn tail: no newline was written after it
            raise LedgerError(f"{path}:{n}: not a ledger event")
        events.append(event)
    return events


def _parse(raw: bytes) -> Event | None:
    try:
        obj = json.loads(raw)
        return Event(obj["seq"], obj["ts"], obj["type"], obj["data"], obj["prev"], obj["hash"])
    except (ValueError, KeyError, TypeError):
        return None


def verify(path: Path, recorded: tuple[int, str] | None = None) -> tuple[bool, str]:
    """Re-hash every event: ``(True, 'ok N events')`` or ``(False, 'seq K: what is wrong')``.

    A last line without its newline that does not parse is a crash mid-append, not tampering:
    it is reported and ignored (the next append cuts it off). ``recorded`` is the
    ``(events, head hash)`` an artifact saw; a ledger shorter than that, or with another event
    at that seq, was cut short or rewritten.
    """
    prev = GENESIS
    hashes: list[str] = []
    tombstones: dict[int, tuple[str, str]] = {}   # seq -> (text, digest): a redaction must vouch
    torn = False
    data = path.read_bytes()
    lines = data.split(b"\n")
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
            seq, ts, type_, d, p, h = (obj["seq"], obj["ts"], obj["type"], obj["data"],
                                       obj["prev"], obj["hash"])
        except (ValueError, KeyError, TypeError):
            if n == len(lines):
                torn = True
                break
            return False, f"seq {len(hashes) + 1} (line {n}): not a valid event"
        if seq != len(hashes) + 1:
            return False, (f"seq {len(hashes) + 1} (line {n}): found seq {seq}, "
                           "events missing or reordered")
        if p != prev:
            return False, f"seq {seq}: prev does not match the hash of seq {seq - 1}"
        if event_hash(seq, ts, type_, d, p) != h:
            return False, f"seq {seq}: content does not match its hash"
        wrong = _text_unproven(seq, type_, d, tombstones)
        if wrong:
            return False, wrong
        prev = h
        hashes.append(h)
    if tombstones:
        seq = min(tombstones)
        return False, (f"seq {seq}: content does not match its hash (its text is not the one "
                       f"hashed, and no {REDACTED} event vouches for a tombstone)")
    if recorded is not None:
        count, head = recorded
        if len(hashes) < count:
            return False, (f"seq {len(hashes) + 1}: missing; debate.json recorded {count} "
                           "events (the ledger was cut short)")
        if count and hashes[count - 1] != head:
            return False, f"seq {count}: not the event debate.json recorded as the head"
    note = " (a torn last line from a crash is ignored)" if torn else ""
    return True, f"ok {len(hashes)} events{note}"


def _text_unproven(seq: int, type_: str, data: dict,
                   tombstones: dict[int, tuple[str, str]]) -> str:
    """Keep ``tombstones`` (texts that do not match their digest) up to date with one event:
    a text that is not its digest's waits for a later redaction event naming it, with that
    digest and exactly that tombstone. Returns what is wrong with a redaction event, if any."""
    digest, text = data.get(TEXT_DIGEST), data.get(TEXT)
    if isinstance(digest, str) and not (isinstance(text, str) and text_digest(text) == digest):
        tombstones[seq] = (text if isinstance(text, str) else "", digest)
    return _vouch(seq, data, tombstones) if type_ == REDACTED else ""


def _vouch(seq: int, data: dict, tombstones: dict[int, tuple[str, str]]) -> str:
    target = data.get("target")
    if not isinstance(target, int) or not 0 < target < seq:
        return f"seq {seq}: a redaction must name an earlier event, not {target!r}"
    if tombstones.get(target) == (data.get("tombstone"), data.get("removed_sha256")):
        del tombstones[target]
    return ""


def rewrite_text(path: Path, seq: int, text: str) -> None:
    """Replace the text of event ``seq`` (one that commits to it by digest), keeping its hash:
    the file is written anew beside the old one and renamed over it, so a reader sees the old
    ledger or the new one, never half of each. The caller holds the writer's lock."""
    lines = path.read_bytes().split(b"\n")
    for i, raw in enumerate(lines):
        event = _parse(raw) if raw.strip() else None
        if event is not None and event.seq == seq:
            if not isinstance(event.data.get(TEXT_DIGEST), str):
                raise LedgerError(f"{path}: seq {seq} does not commit to its text by digest")
            data = {**event.data, TEXT: text}
            lines[i] = canonical({"seq": event.seq, "ts": event.ts, "type": event.type,
                                  "data": data, "prev": event.prev, "hash": event.hash})
            break
    else:
        raise LedgerError(f"{path}: no event with seq {seq}")
    tmp = path.with_name(f".{path.name}.redact")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, path.stat().st_mode & 0o777)
    with os.fdopen(fd, "wb") as fh:
        fh.write(b"\n".join(lines))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _mend_tail(path: Path) -> None:
    """Make the file end on a line boundary before appending: a last event that lost only its
    newline is completed; a partial one (a crash mid-write) is cut off."""
    with open(path, "rb+") as fh:
        data = fh.read()
        if not data or data.endswith(b"\n"):
            return
        start = data.rfind(b"\n") + 1
        if _parse(data[start:]) is not None:
            fh.write(b"\n")
        else:
            fh.truncate(start)
        fh.flush()
        os.fsync(fh.fileno())
