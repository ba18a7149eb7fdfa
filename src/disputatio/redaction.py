"""``disputatio redact``: a turn's text replaced by a tombstone, everywhere, the chain intact.

A turn event written by this version commits to its text through ``text_sha256`` (see
``ledger.committed``), so the text can be replaced in place without changing any hash: a
signature made before the redaction still covers every event, and ``verify`` accepts the
tombstone because a ``turn_redacted`` event, chained after it, names the event, the digest and
exactly that tombstone. The redaction event is appended *before* the text is replaced: a crash in
between leaves the text intact and a ledger that verifies, and running the command again
finishes the job.

The text is gone from the ledger, from every artifact (rendered again), and from ``raw/``: the
turn's own output files are deleted; later turns' prompts (which quote it) lose every line of
it, and the other files there every line of it as quoted (``> line``), plain or JSON-escaped:
each is replaced by the tombstone. Another agent's answer that repeated the text in its own words
keeps it: redact that turn too.
"""

from __future__ import annotations

import getpass
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from disputatio import folder, ledger, verdict, views
from disputatio.events import TurnEnded, TurnRedacted, parse, typed
from disputatio.outcome import EXIT_OK, Outcome, UsageError
from disputatio.text import one_line

REASON_LIMIT = 300
# lines shorter than this are not looked for in other raw files: "> ok" is everywhere
SCRUB_MIN = 16


def tombstone(reason: str) -> str:
    return f"[REDACTED: {reason}]"


def redact(debate: Path, turn: str, reason: str, who: str | None = None) -> Outcome:
    """Replace the text of every recorded attempt of ``turn`` (a turn id, or an event's seq)
    with ``[REDACTED: reason]``; the artifacts are rendered again and a signed debate is
    signed again."""
    reason = one_line(reason, REASON_LIMIT)
    if not reason:
        raise UsageError("--reason must say why (it is kept in the ledger and the tombstone)")
    with folder.opened(debate, None, "redact", False) as (debate_dir, led, key):
        targets = _targets(led.events, turn, debate_dir)
        by = who or _who()
        dead = tombstone(reason)
        for ev, model in targets:
            # an earlier run that appended the event and stopped: the tombstone it named stays
            stone = _vouched(led.events, ev.seq)
            if not stone:
                stone = dead
                led.append(TurnRedacted.TYPE, TurnRedacted(
                    target=ev.seq, turn_id=model.turn_id, removed_sha256=model.text_sha256 or "",
                    tombstone=stone, reason=reason, by=by).to_data())
            ledger.rewrite_text(led.path, ev.seq, stone)
        turns = [m for _, m in targets]
        removed, scrubbed = _scrub_raw(debate_dir, turns, dead)
        events = ledger.load(led.path)
        status, why = views.status(events)
        primary = folder.write(debate_dir, events, status, why)
        # the page show --open wrote here is a rendering too (its words are marked up, so
        # scrubbing could not find them): rendered again
        page = debate_dir / views.PAGE
        if page.is_file() and not page.is_symlink():
            _replace(page, views.render(debate_dir, "html"))
        # a document the new state no longer renders (a ruling whose text is gone) stays on
        # disk as it was: scrubbed like a prompt
        fresh = {*folder.render_all(events, status, why).files, "events.jsonl", "lineup.json",
                 views.PAGE, *verdict.FILES}
        _scrub([p for p in debate_dir.iterdir() if p.name not in fresh],
               _needles(turns, quoted=False), dead)
        verdict.redact(debate_dir, [t.text for t in turns], dead)   # a review's, as JSON
        message = (f"redacted {len(targets)} event(s) of {targets[0][1].turn_id}; raw/: "
                   f"{removed} file(s) removed, {scrubbed} scrubbed")
        return folder.signed(Outcome(EXIT_OK, primary, "redacted", message), led, key)


def _targets(events, turn: str, debate_dir: Path) -> list[tuple[ledger.Event, TurnEnded]]:
    """Every ended attempt of the turn that still has a text to remove."""
    ended = [(ev, m) for ev, m in typed(events) if isinstance(m, TurnEnded)]
    chosen = [(ev, m) for ev, m in ended if m.turn_id == turn or str(ev.seq) == turn]
    if not chosen:
        known = sorted({m.turn_id for _, m in ended})
        raise UsageError(f"{debate_dir}: no turn {turn!r}; its turns are "
                         f"{', '.join(known) or 'none'}")
    name = chosen[0][1].turn_id
    old = [ev.seq for ev, m in chosen if m.text and m.text_sha256 is None]
    if old:
        raise UsageError(f"{debate_dir}: seq {old[0]} ({name}) was recorded before turn texts "
                         "were committed by digest; redacting it would break the hash chain")
    left = [(ev, m) for ev, m in chosen
            if m.text and ledger.text_digest(m.text) == m.text_sha256]
    if not left:
        raise UsageError(f"{debate_dir}: {name} has no text to redact (already redacted, or "
                         "it gave none)")
    return left


def _vouched(events, seq: int) -> str:
    """The tombstone a redaction event already names for ``seq`` ('' if none)."""
    for ev in events:
        if ev.type == TurnRedacted.TYPE:
            model = parse(ev)
            if isinstance(model, TurnRedacted) and model.target == seq:
                return model.tombstone
    return ""


def _scrub_raw(debate_dir: Path, turns: list[TurnEnded], dead: str) -> tuple[int, int]:
    """Delete the turns' own output files; replace their lines wherever else in raw/ they
    appear. Returns (files removed, files scrubbed)."""
    raw = debate_dir / "raw"
    if not raw.is_dir():
        return 0, 0
    own: set[str] = set()
    for t in turns:
        own.update(t.raw)
        if t.raw_stem:
            own.update(p.name for p in raw.glob(f"{t.raw_stem}.*")
                       if not p.name.endswith((".prompt.md", ".stdin")))
    removed = 0
    for name in sorted(own):
        path = raw / name
        if path.is_file() and not path.is_symlink() and path.parent == raw:
            path.unlink()
            removed += 1
    files = sorted(raw.rglob("*"))
    scrubbed = _scrub([p for p in files if p.name.endswith(_INPUTS)],
                      _needles(turns, quoted=False), dead)
    scrubbed += _scrub([p for p in files if not p.name.endswith(_INPUTS)],
                       _needles(turns, quoted=True), dead)
    return removed, scrubbed


def _scrub(paths: list[Path], needles: list[tuple[str, Callable[[str], str]]], dead: str) -> int:
    """Replace every needle in these text files (each rewritten by a rename); how many
    changed. Binary files, symlinks and folders are left alone."""
    changed = 0
    for path in paths:
        if not path.is_file() or path.is_symlink():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        new = text
        for needle, replace in needles:
            new = new.replace(needle, replace(dead))
        if new != text:
            _replace(path, new)
            changed += 1
    return changed


def _replace(path: Path, text: str) -> None:
    """``path`` rewritten by a rename: a reader sees the old text or the new, never half."""
    tmp = path.with_name(f".{path.name}.redact")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# the prompts of later turns, which quote the transcript: every line of the text is looked for
_INPUTS = (".prompt.md", ".stdin")


def _needles(turns: list[TurnEnded], quoted: bool) -> list[tuple[str, Callable[[str], str]]]:
    """What to look for, longest first: each line of the texts long enough to be its own, as
    written (``quoted``: as a prompt or a markdown answer quotes it, ``> line``, for the other
    files, where the other turns' own words must stay), and as JSON escapes it (a CLI's log
    of the prompt it was given)."""
    found: dict[str, Callable[[str], str]] = {}
    for t in turns:
        for line in t.text.splitlines():
            piece = line.strip()
            if len(piece) < SCRUB_MIN:
                continue
            if quoted:
                piece = f"> {piece}"
            found[piece] = _as_is
            found[json.dumps(piece, ensure_ascii=False)[1:-1]] = _escaped
            found[json.dumps(piece)[1:-1]] = _ascii_escaped
    return sorted(found.items(), key=lambda kv: -len(kv[0]))


def _as_is(dead: str) -> str:
    return dead


def _escaped(dead: str) -> str:
    return json.dumps(dead, ensure_ascii=False)[1:-1]


def _ascii_escaped(dead: str) -> str:
    return json.dumps(dead)[1:-1]


def _who() -> str:
    """git's identity where it has one (user.name <user.email>), else the OS user."""
    def git(key: str) -> str:
        try:
            out = subprocess.run(["git", "config", "--get", key], capture_output=True,
                                 text=True, timeout=5, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return ""
        return one_line(out.stdout, 200) if out.returncode == 0 else ""

    name, email = git("user.name"), git("user.email")
    if name or email:
        return f"{name} <{email}>".strip() if email else name
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"
