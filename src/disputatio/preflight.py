"""What a command settles before it makes anything: a new debate's options (``RunOptions``)
over its lineup, the protocol's settings, every CLI of the lineup installed, the write fence.
Each refusal is a ``UsageError`` (one line, exit 2) raised before a debate folder exists or a
token is spent; ``app`` re-exports ``RunOptions`` and ``choose_fence`` for the faces."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from disputatio import config
from disputatio.adapters import fence as fencing
from disputatio.adapters import transport
from disputatio.config import DebateConfig
from disputatio.context import RunContext
from disputatio.outcome import UsageError


@dataclass
class RunOptions:
    """What the command line gives a new debate; None leaves the lineup's value."""

    rounds: int | None = None
    repo: str | None = None
    timeout_minutes: float | None = None
    budget_usd: float | None = None
    include_uncommitted: bool | None = None
    max_parallel: int | None = None
    quiet: bool = False
    sign: bool = False
    fence: str | None = None
    human: bool = False   # a human in the loop: the context must carry a face that asks them
    at: str | None = None   # the commit agents see instead of HEAD (a review's head)
    max_cost_usd: float | None = None   # the debate-wide cost cap (--max-cost)
    review: dict | None = None   # a review's settings, recorded for resume (review.py)


def choose_fence(mode: str | None, context: RunContext | None = None) -> fencing.Fence:
    """The write fence for this command's agents (``require`` without one: exit 2 before
    anything is made). Without a fence the debate still runs and the ledger says so; a warning
    too, unless the user turned it off."""
    try:
        fence = fencing.choose(mode or fencing.default_mode())
    except (fencing.FenceUnavailable, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if not fence.on and fence != fencing.OFF:
        (context or RunContext()).warn(
            f"no write fence: {fence.reason}; only each CLI's own read-only settings keep "
            "the agents from writing outside their checkouts")
    transport.use_fence(fence)
    return fence


def apply_flags(cfg: DebateConfig, o: RunOptions) -> DebateConfig:
    """Flags over file values, validated like the file (``--timeout 0`` is refused too).
    ``--rounds`` is the protocol's to check, against its own cap (``protocol_settings``)."""
    data = cfg.model_dump(exclude_none=True)
    flags = {"repo": o.repo, "timeout_minutes": o.timeout_minutes,
             "include_uncommitted": o.include_uncommitted,
             "max_parallel": o.max_parallel, "fence": o.fence, "max_cost_usd": o.max_cost_usd}
    data.update({k: v for k, v in flags.items() if v is not None})
    try:
        applied = DebateConfig.model_validate(data)
        applied._source = cfg._source
        return applied
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        flag = where.replace("_minutes", "").replace("_usd", "").replace("_", "-")
        raise UsageError(f"--{flag}: {err['msg']}") from None


def protocol_settings(rules, cfg: DebateConfig, options: RunOptions):
    """The protocol's settings: its ``protocol:`` key (over the lineup's top-level ``rounds``
    when the protocol counts its rounds as ``rounds``, as disputatio does), then ``--rounds``
    into the setting it names (``rounds_setting``). A wrong one is one line naming the key in
    the file, or ``--rounds`` when the file alone is fine."""
    target = rounds_setting(rules, cfg.rounds)
    if options.rounds is not None and target is None:
        raise UsageError("--rounds: this protocol has no rounds")
    data = {**({"rounds": cfg.rounds} if target == "rounds" else {}), **cfg.protocol}
    try:
        settings = rules.Config.model_validate(data, context={"flags": set()})
    except ValidationError as exc:
        raise UsageError(_in_file(exc.errors()[0], cfg, target)) from None
    if options.rounds is not None and target is not None:
        try:
            # the context says which settings the command line gave, should a protocol care
            settings = rules.Config.model_validate({**data, target: options.rounds},
                                                   context={"flags": {"rounds"}})
        except ValidationError as exc:
            said = "" if target == "rounds" else f" (for this protocol --rounds sets {target})"
            raise UsageError(f"--rounds: {exc.errors()[0]['msg']}{said}") from None
    check = getattr(rules, "check", None)   # optional: the settings against the lineup
    if check is None:
        return settings
    try:
        return check(settings, [p.display for p in cfg.participants], options.human)
    except ValueError as exc:   # at the line of the setting it names (``key``), if it does
        raise UsageError(f"{cfg.place('protocol', *getattr(exc, 'key', ()))}{exc}") from None


def _in_file(err, cfg: DebateConfig, target: str | None) -> str:
    """A setting the lineup file got wrong, at its line: ``file:line: protocol.key: what``."""
    key = tuple(str(x) for x in err["loc"])
    # a rounds the protocol key does not set is the lineup's top-level one
    from_top = key[:1] == ("rounds",) and "rounds" not in cfg.protocol
    line = cfg.place("rounds") if from_top else cfg.place("protocol", *key)
    what = err["msg"]
    if err["type"] == "extra_forbidden":
        what = "unknown setting" + (f" ({target} sets this protocol's rounds)"
                                    if key == ("rounds",) and target else "")
    return f"{line}{'.'.join(('protocol', *key))}: {what}"


def rounds_setting(rules, rounds: int) -> str | None:
    """The setting ``--rounds`` sets: the one the protocol's settings name (``ROUNDS_FLAG``,
    as a committee's ``max_rounds``), else ``rounds`` when they take it (a field, or read by
    a validator), else None: the protocol has no rounds."""
    named = getattr(rules.Config, "ROUNDS_FLAG", None)
    if named is not None:
        return str(named)
    try:
        rules.Config.model_validate({"rounds": rounds}, context={"flags": set()})
    except ValidationError as exc:
        if any(e["type"] == "extra_forbidden" and tuple(e["loc"]) == ("rounds",)
               for e in exc.errors()):
            return None
    return "rounds"


def check_binaries(cfg: DebateConfig) -> None:
    """Every CLI of the lineup must exist before a debate folder is made and tokens are spent."""
    from disputatio.engine import participant_bin

    seats = [*cfg.participants, *[p for p in (cfg.judge, cfg.synthesizer) if p is not None],
             *config.jury_seats(cfg).values()]
    for p in seats:
        found = participant_bin(p)
        if Path(found).is_dir() or (Path(found).is_file() and not os.access(found, os.X_OK)):
            what = "a directory" if Path(found).is_dir() else "not executable"
            raise UsageError(f"{p.display}: '{found}' is {what}; set 'bin:' in the config to "
                             "the CLI's executable")
        if not Path(found).is_file():
            raise UsageError(f"{p.display}: '{found}' is not installed or not on PATH (set "
                             "'bin:' in the config, run disputatio --init, or try --demo)")

