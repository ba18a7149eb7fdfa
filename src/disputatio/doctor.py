"""``doctor`` and ``init``: prove each CLI can really take a turn before tokens are spent.

A canary is a real, short turn through the same adapter and transport a debate uses, so a CLI
that answers ``--version`` but is not logged in (or is a stale shim) is caught here. Both use
cases print nothing: they return what they found (a ``Checkup``, with the lines that say it)
and hand a face the lines to show before the canaries run, which can take up to the timeout.
The caller chooses the write fence first (``app.choose_fence``), as for a debate.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import yaml

from disputatio import adapters
from disputatio.adapters import fence as fencing
from disputatio.adapters import transport
from disputatio.adapters.base import INTERRUPTED, Invocation, TurnRequest, TurnResult
from disputatio.cancel import CancelToken
from disputatio.config import DebateConfig, Participant, user_config_path
from disputatio.engine import participant_bin, probe_version
from disputatio.gitenv import agent_env
from disputatio.outcome import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, Outcome

CANARY = "This is a connectivity check. Reply with the single word OK and nothing else."
CANARY_TIMEOUT_S = 90.0
# where npm, pnpm, bun, volta and pipx-style installs usually put binaries
USUAL_DIRS = ("~/.local/bin", "~/.npm-global/bin", "~/.bun/bin", "~/.volta/bin",
              "~/.local/share/pnpm", "/usr/local/bin", "/opt/homebrew/bin")


@dataclass
class Health:
    participant: Participant
    binary: str
    result: TurnResult
    version: str | None
    seconds: float
    fence: str | None = None   # the write-fence canary's finding; None: no fence to check

    @property
    def ok(self) -> bool:
        return self.result.ok and self.fence in (None, FENCE_HOLDS)

    def line(self) -> str:
        p = self.participant
        mark = "✓" if self.ok else "✗"
        version = self.version or "version unknown"
        head = f"{mark} {p.display} ({p.vendor}, {p.adapter} {version})"
        fence = f" · {self.fence}" if self.fence else ""
        if self.result.ok:
            return f"{head}: ok in {self.seconds:.1f}s{fence}"
        return f"{head}: {self.result.failure}: {self.result.message}{fence}"

    def drift(self) -> str | None:
        tested = adapters.get(self.participant.adapter).tested_version
        if self.version and tested and self.version != tested:
            return (f"{self.participant.display}: installed {self.version}, tested with "
                    f"{tested}; if turns fail to parse, this is why")
        return None


@dataclass
class Checkup:
    """What ``doctor`` or ``init`` found: a Health per CLI that answered (in lineup order;
    Ctrl-C leaves out the canaries it ended), warnings, and how the command ends."""

    outcome: Outcome
    healths: list[Health]
    warnings: list[str] = field(default_factory=list)
    backup: Path | None = None   # init: where the config it replaced was moved

    def lines(self) -> list[str]:
        """What was found, as the user reads it (the outcome's message aside)."""
        return [*(h.line() for h in self.healths), *(f"warning: {w}" for w in self.warnings),
                *([f"backed up the previous config to {self.backup}"] if self.backup else [])]


Notice = Callable[[list[str]], None]   # lines to show before the canaries run


def canary(p: Participant, timeout_s: float, scratch: Path,
           cancel: CancelToken | None = None) -> Health:
    """One short real turn in an empty private directory (never the user's repository);
    never raises. Cancelling ``cancel`` ends it."""
    adapter = adapters.get(p.adapter)
    binary = participant_bin(p)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", p.display).strip("._-") or "cli"
    work = scratch / stem
    work.mkdir(parents=True, exist_ok=True)
    version = probe_version(binary, adapter, scratch / "versions", 20, dict(p.env), cancel) \
        if adapter.version_args else adapter.tested_version
    request = TurnRequest(prompt=CANARY, bin=binary, model=p.model, effort=p.effort,
                          max_budget_usd=p.max_budget_usd, timeout_s=timeout_s,
                          extra_args=tuple(p.extra_args), env=dict(p.env), options=p.options())
    start = time.monotonic()
    capture = transport.run(_impatient(adapter.build(request)), work, timeout_s,
                            scratch / "raw", stem, agent_env(os.environ, work),
                            writable=[work], state=adapter.state_dirs, cancel=cancel)
    seconds = time.monotonic() - start
    return Health(p, binary, adapter.parse(capture), version, seconds,
                  fence_canary(p, work, scratch / "raw", f"{stem}-fence", cancel))


FENCE_HOLDS = "fence holds"


def fence_canary(p: Participant, work: Path, raw: Path, stem: str,
                 cancel: CancelToken | None = None) -> str | None:
    """Under the very fence this CLI's turns get (its checkout, its state dirs, its env), a
    shell tries to write into the home directory, outside everything it was granted, and into
    each state dir, which it needs. The turn above proved the CLI itself runs fenced; this
    proves the fence around it stops a write, which no answer of the CLI could show."""
    if not transport.current_fence().on:
        return None
    adapter = adapters.get(p.adapter)
    outside = Path.home() / f".disputatio-fence-canary-{uuid.uuid4().hex[:12]}"
    env = {**agent_env(os.environ, work), **p.env}
    states = fencing.state_paths(adapter.state_dirs, env)
    script = ('touch "$1" 2>/dev/null; shift; for d; do [ -d "$d" ] || continue; '
              'f="$d/.disputatio-fence-canary-$$"; '
              'touch "$f" 2>/dev/null && rm -f "$f" || echo "state-denied $d"; done')
    inv = Invocation(argv=("sh", "-c", script, "sh", str(outside), *map(str, states)),
                     env=dict(p.env))
    cap = transport.run(inv, work, 30, raw, stem, agent_env(os.environ, work),
                        writable=[work], state=adapter.state_dirs, cancel=cancel)
    out = cap.read_stdout()
    if outside.exists():  # what counts is this side: a home under /tmp is private inside
        outside.unlink()
        return f"fence broken: a write reached {outside.parent}"
    if cap.exit_code is None or cap.spawn_error:
        return f"fence canary did not run: {cap.spawn_error or 'timed out'}"
    denied = [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("state-")]
    if denied:
        return f"fence denies its state dir {denied[0]}"
    return FENCE_HOLDS


def _impatient(invocation: Invocation) -> Invocation:
    """A canary gives up at the first sign that the CLI can only retry: a healthy CLI answers
    a one-word prompt at once, so there is no outage worth waiting out."""
    if invocation.give_up is None:
        return invocation
    return dataclasses.replace(invocation,
                               give_up=dataclasses.replace(invocation.give_up, patience_s=0.0))


def check_all(people: list[Participant], timeout_s: float,
              cancel: CancelToken | None = None) -> tuple[list[Health], bool]:
    """Every canary at once; also whether ``cancel`` (the CLI's Ctrl-C or SIGTERM) cut them
    short (the healths then leave out the canaries it ended). A cancel ends every canary's
    process tree — they run in sessions of their own, out of reach of the terminal's signal —
    instead of leaving them to their timeout; no signal handler and no process-wide state is
    touched, so any thread may call this."""
    cancel = cancel or CancelToken()
    with tempfile.TemporaryDirectory(prefix="disputatio-doctor-",
                                     ignore_cleanup_errors=True) as tmp:
        with ThreadPoolExecutor(max_workers=max(1, len(people))) as pool:
            # a directory per canary: names may differ only where a file name cannot
            healths = list(pool.map(
                lambda i: canary(people[i], timeout_s, Path(tmp) / str(i), cancel),
                range(len(people))))
    return [h for h in healths if h.result.failure != INTERRUPTED], cancel.cancelled


def _ignore(lines: list[str]) -> None:
    return None


def doctor(cfg: DebateConfig, timeout_minutes: float | None, fence: fencing.Fence,
           notice: Notice = _ignore, cancel: CancelToken | None = None) -> Checkup:
    """A canary per CLI of the lineup (a judge identical to a debater is checked once), under
    ``fence``; exit 0 only when every one is healthy."""
    seats = [*cfg.participants, cfg.judge, cfg.synthesizer]  # a lineup may have no judge
    people = _unique([p for p in seats if p is not None])
    timeout_s = timeout_minutes * 60 if timeout_minutes else CANARY_TIMEOUT_S
    words = f"write fence: {fence.mechanism}" if fence.on else f"no write fence: {fence.reason}"
    notice([f"checking {len(people)} CLIs (canary turn, timeout {timeout_s:.0f}s; {words})…"])
    healths, stopped = check_all(people, timeout_s, cancel)
    if stopped:
        return Checkup(Outcome(EXIT_INTERRUPTED, None, "interrupted",
                               f"interrupted: {len(healths)} of {len(people)} CLIs checked"),
                       healths)
    drift = [d for h in healths if (d := h.drift())]
    bad = sum(not h.ok for h in healths)
    if bad:
        return Checkup(Outcome(EXIT_FAILED, None, "unhealthy",
                               f"{bad} of {len(healths)} CLIs failed"), healths, drift)
    return Checkup(Outcome(EXIT_OK, None, "healthy", f"all {len(healths)} CLIs healthy"),
                   healths, drift)


def find_binary(adapter_name: str) -> str | None:
    """On PATH first, then the usual install dirs; None when nowhere."""
    name = adapters.get(adapter_name).default_bin
    found = shutil.which(name)
    if found:
        return found
    for d in USUAL_DIRS:
        candidate = Path(d).expanduser() / name
        if candidate.is_file() and candidate.stat().st_mode & 0o111:
            return str(candidate)
    return None


def init(force: bool, timeout_minutes: float | None, fence: fencing.Fence,
         notice: Notice = _ignore, cancel: CancelToken | None = None) -> Checkup:
    """Find the CLIs, canary each under ``fence`` and write the user config from the ones that
    work (never reading the config it may replace); nothing is written unless two work."""
    timeout_s = timeout_minutes * 60 if timeout_minutes else CANARY_TIMEOUT_S
    candidates, missing = [], []
    for name in (a.name for a in adapters.agents(tested=True)):  # the CLIs proven here
        binary = find_binary(name)
        if binary is None:
            missing.append(name)
            continue
        on_path = shutil.which(adapters.get(name).default_bin) == binary
        candidates.append(Participant(adapter=name, bin=None if on_path else binary))
    notice([f"✗ {name}: not found on PATH or in the usual install dirs" for name in missing])
    healths, stopped = check_all(candidates, timeout_s, cancel) if candidates else ([], False)
    if stopped:
        return Checkup(Outcome(EXIT_INTERRUPTED, None, "interrupted",
                               "interrupted; nothing was written"), healths)
    working = [h.participant for h in healths if h.ok]
    if len(working) < 2:
        return Checkup(Outcome(EXIT_FAILED, None, "unhealthy",
                               f"found {len(working)} working CLI(s); a debate needs two. "
                               "Log in to the CLIs above (or install them) and run --init "
                               "again; nothing was written"), healths)
    path = user_config_path()
    # a fence proven around every CLI here is required from now on: losing it later (bwrap
    # removed, user namespaces turned off) then stops a debate instead of weakening it
    held = fence.on and all(h.fence == FENCE_HOLDS for h in healths if h.ok)
    data = {
        "rounds": 1, "timeout_minutes": 10, "fence": "require" if held else "auto",
        "participants": [p.model_dump(exclude_none=True, exclude_defaults=True)
                         for p in working],
        "judge": {**working[0].model_dump(exclude_none=True, exclude_defaults=True),
                  "name": "judge"},
    }
    DebateConfig.model_validate(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists() and not force:
        stamp = f"config.yaml.bak-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
        backup = path.with_name(stamp)
        n = 1
        while backup.exists():
            n += 1
            backup = path.with_name(f"{stamp}-{n}")
        path.replace(backup)
    header = ("# written by `disputatio --init`: every CLI below answered a canary turn.\n"
              "# Every key is documented in examples/debate.yaml.\n")
    path.write_text(header + yaml.safe_dump(data, sort_keys=False))
    return Checkup(Outcome(EXIT_OK, path, "written",
                           f"wrote a lineup of {len(working)} CLIs, judge {working[0].adapter}"),
                   healths, backup=backup)


def _unique(people: list[Participant]) -> list[Participant]:
    seen, out = set(), []
    for p in people:
        key = (p.adapter, p.bin, p.model, tuple(sorted(p.env.items())), tuple(p.extra_args),
               repr(sorted(p.options().items())))   # two commands are two CLIs
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out
