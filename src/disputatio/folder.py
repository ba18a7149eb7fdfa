"""A debate folder on disk: finding and making one, its lineup file (what a resumed debate
runs), its ledger opened for the one writer (verified, signed heads checked) and its artifacts,
rendered through the debate's protocol."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from disputatio import ledger, protocols, signing
from disputatio.config import Participant
from disputatio.engine import Seat
from disputatio.events import EventError, started_event, typed
from disputatio.outcome import EXIT_FAILED, BrokenLedger, Outcome, UsageError
from disputatio.render import report

LINEUP_FILE = "lineup.json"
DEBATES = ".debate"


def render_all(events, status: str, reason: str = "") -> report.Artifacts:
    """Every file of the debate folder, as the debate's protocol presents it."""
    started = started_event(events)
    protocol = protocols.get(started.protocol if started else "disputatio")
    return report.render_all(events, status, reason,
                             protocol.presentation(protocol.state(events)))


def write(debate_dir: Path, events, status: str, reason: str) -> Path:
    """Write every artifact (each replaced whole, never half-written); the primary's path."""
    arts = render_all(events, status, reason)
    for name, content in arts.files.items():
        tmp = debate_dir / f".{name}.tmp"
        tmp.write_text(content, encoding="utf-8")
        os.replace(tmp, debate_dir / name)
    return debate_dir / arts.primary


def write_lineup(debate_dir: Path, lineup: dict[str, Participant], judge: Participant | None,
                 synth: Participant | None, key: str | None = None,
                 more: dict[str, Participant] | None = None) -> str:
    """The full lineup, env values included, in a file only the user can read: the ledger
    keeps a redacted copy, and a resumed debate must run the same CLIs with the same logins.
    The signing key asked for is kept too: a debate killed before its first signature is
    still signed by the command that finishes it."""
    data = {"lineup": {n: p.model_dump(exclude_none=True) for n, p in lineup.items()},
            "seats": {"judge": judge.model_dump(exclude_none=True) if judge else None,
                      "synthesizer": synth.model_dump(exclude_none=True) if synth else None,
                      **{k: p.model_dump(exclude_none=True) for k, p in (more or {}).items()}},
            **({"sign": key} if key else {})}
    raw = json.dumps(data, indent=2, sort_keys=True).encode()
    fd = os.open(debate_dir / LINEUP_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(raw)
    return hashlib.sha256(raw).hexdigest()


def seats(state, debate_dir: Path, warn: Callable[[str], None] | None = None) -> dict[str, Seat]:
    """Everyone who may take a turn, from lineup.json: the debaters, then the roles the
    protocol seats (``warn``: say so when the file was edited since the debate started)."""
    started = state.started
    protocol = protocols.get(started.protocol)
    path = debate_dir / (started.lineup_file or LINEUP_FILE)
    try:
        raw = path.read_bytes()
        private = json.loads(raw)
    except (OSError, ValueError):
        raise UsageError(f"{path}: missing or unreadable; the lineup (with its env values) "
                         "cannot be recovered, so this debate cannot go on") from None
    if warn and started.lineup_sha256 not in (None, hashlib.sha256(raw).hexdigest()):
        warn(f"{path} was edited since the debate started; running the edited lineup")
    budget = started.budget_usd
    try:
        found = {n: Seat(_entry(path, f"lineup.{n}", p)) for n, p in private["lineup"].items()}
        for spec in protocol.seats(state):
            if spec.name not in found:
                found[spec.name] = Seat(_entry(path, f"seats.{spec.key}",
                                               private["seats"][spec.key]),
                                        budget if spec.budgeted else None)
    except (KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{path}: no lineup entry at {exc}; fix the file, or start a new "
                         "debate") from None
    return found


def _entry(path: Path, where: str, data: object) -> Participant:
    """A lineup entry as the user may have edited it to fix a debate: wrong is one line."""
    try:
        return Participant.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        at = ".".join([where, *(str(x) for x in err["loc"])])
        what = err["msg"].removeprefix("Value error, ")
        raise UsageError(f"{path}: {at}: {what}; fix the file, or start a new debate") from None


def new_dir(base: Path) -> Path:
    root = base / DEBATES
    root.mkdir(parents=True, exist_ok=True)
    ignore = root / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    for n in range(1, 1000):
        path = root / (f"debate-{stamp}" + (f"-{n}" if n > 1 else ""))
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise UsageError(f"{root}: cannot create a debate folder")


def find(debate: Path | None, base: Path | None) -> Path:
    if debate is not None:
        if not (debate / "events.jsonl").is_file():
            raise UsageError(f"{debate}: not a debate folder (no events.jsonl)")
        return debate
    root = (base or Path.cwd()) / DEBATES
    found = sorted(p for p in root.glob("debate-*") if (p / "events.jsonl").is_file()) \
        if root.is_dir() else []
    if not found:
        raise UsageError(f"no debate found under {root}; pass --debate DIR")
    return max(found, key=lambda p: p.name)


@contextmanager
def opened(debate: Path | None, base: Path | None, command: str,
           sign: bool) -> Iterator[tuple[Path, ledger.Ledger, str | None]]:
    """The debate's ledger for its one writer: the lock first (another writer: ``Busy``), then
    the ledger read and verified under it, before anything (even mending a torn tail) touches
    it. Yields ``(debate_dir, ledger, signing key or None)``; the lock is held until the
    command is done."""
    debate_dir = find(debate, base)
    key = signing_key(True if sign else _asked_key(debate_dir), debate_dir)
    with ledger.WriterLock(debate_dir, command):
        path = debate_dir / "events.jsonl"
        ok, message = ledger.verify(path, recorded(debate_dir))
        if not ok:
            raise BrokenLedger(f"{path} does not verify ({message}); refusing to add to it")
        try:
            led = ledger.Ledger(path)
        except ledger.LedgerError as exc:
            raise BrokenLedger(f"{exc}; refusing to add to it") from None
        if not led.events or led.events[0].type != "debate_started":
            raise UsageError(f"{debate_dir}: the ledger has no debate_started event")
        try:
            for _ in typed(led.events):
                pass
        except EventError as exc:
            raise BrokenLedger(f"{path}: {exc}; this version cannot read it, so refuses to "
                               "add to it") from None
        if key is not None and signing.signatures(debate_dir):
            try:
                ok, why = signing.check_own(debate_dir, [e.hash for e in led.events], key)
            except signing.SigningError as exc:
                raise UsageError(str(exc)) from None
            if not ok:  # signing on would vouch for whatever was forged since
                raise BrokenLedger(f"{path}: the head is not the one {key} signed ({why}); "
                                   "refusing to add to it")
        yield debate_dir, led, key


def _asked_key(debate_dir: Path) -> str | None:
    """The key the debate was started to be signed with (kept in lineup.json), if any."""
    try:
        key = json.loads((debate_dir / LINEUP_FILE).read_bytes()).get("sign")
    except (OSError, ValueError, AttributeError):
        return None
    return key if isinstance(key, str) and key else None


def signing_key(choice: bool | str | None, debate_dir: Path | None = None) -> str | None:
    try:
        return signing.resolve_key(choice, debate_dir)
    except signing.SigningError as exc:
        raise UsageError(str(exc)) from None


def signed(outcome: Outcome, led: ledger.Ledger, key: str | None) -> Outcome:
    """Sign the head the command leaves, while it still holds the lock. A signature that
    cannot be made fails the command: the user asked for one."""
    if key is None:
        return outcome
    try:
        signing.sign(led.path.parent, len(led.events), led.last_hash, key)
    except (OSError, signing.SigningError) as exc:
        status = outcome.status.replace("_", " ") or "recorded"
        return Outcome(EXIT_FAILED, outcome.path, "unsigned",
                       f"{exc} (the debate's own status: {status})")
    return outcome


def recorded(debate_dir: Path) -> tuple[int, str] | None:
    """What debate.json says the ledger held when it was rendered (None: no such record)."""
    try:
        rec = json.loads((debate_dir / "debate.json").read_text())["ledger"]
        return int(rec["events"]), str(rec["head"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
