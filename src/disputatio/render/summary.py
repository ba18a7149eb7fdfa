"""Facts derived from the ledger that several views share: turns, totals, degradation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from disputatio.events import (
    AnswersGiven,
    DebateStarted,
    FinalizeRequested,
    Resumed,
    TurnEnded,
    TurnFields,
    TurnInterrupted,
    TurnStarted,
    typed,
)
from disputatio.text import one_line


@dataclass(frozen=True)
class TurnView:
    """A turn as the views show it: the ledger's record of its latest attempt (the same type
    the protocols read), and the attempts before it."""

    turn: TurnEnded
    # earlier attempts of this turn (a failed turn run again by resume): said in one line
    # (``earlier_attempts``), and what they spent belongs to the debate's totals
    earlier: tuple[TurnEnded, ...] = ()

    @property
    def ok(self) -> bool | None:
        """None: started but never finished (crash or interruption)."""
        return self.turn.ok if self.turn.finished else None


@dataclass
class Totals:
    turns: int = 0
    failed: int = 0
    agent_s: float = 0.0
    cost_usd: float | None = None      # None: no turn reported a cost
    cost_complete: bool = True         # False: some turn's cost is unknown
    tokens: dict[str, int] = field(default_factory=dict)  # a lower bound unless tokens_complete
    tokens_complete: bool = True       # False: some turn's tokens are unknown
    commands_turns: int = 0            # turns that ran at least one command
    observed_turns: int = 0            # turns whose CLI reports commands at all


def turns(events) -> list[TurnView]:
    """Every turn in the order it started; the latest attempt wins for a re-run turn."""
    views: dict[str, TurnView] = {}
    for _, e in typed(events):
        if isinstance(e, TurnStarted):
            before = views.pop(e.turn_id, None)
            views[e.turn_id] = TurnView(_unfinished(e), (*before.earlier, before.turn)
                                        if before else ())
        elif isinstance(e, TurnEnded):
            before = views.get(e.turn_id)
            views[e.turn_id] = TurnView(e, before.earlier if before else ())
    return list(views.values())


def earlier_attempts(view: TurnView) -> str | None:
    """What became of a re-run turn's earlier attempts, in one line (None: it ran once): the
    record shows the latest attempt, and a failure that resume made good is not forgotten."""
    if not view.earlier:
        return None
    said = [f"failed ({e.failure}): {one_line(e.message or '', 200)}" if e.finished and not e.ok
            else "answered" if e.finished else "did not finish" for e in view.earlier]
    n = len(said)
    return f"{'An earlier attempt' if n == 1 else f'{n} earlier attempts'}: {'; '.join(said)}"


def _unfinished(started: TurnStarted) -> TurnEnded:
    """A started turn until its end is recorded: nothing answered, nothing known spent."""
    common = started.model_dump(include=set(TurnFields.model_fields))
    return TurnInterrupted(**common, ok=False)


# no process ran: nothing was spent
_NOTHING_RAN = ("not_installed", "not_runnable")


def totals(views: list[TurnView]) -> Totals:
    """Counts over the turns as they stand; spend over every attempt, a figure unknown for any
    attempt (one that never finished included) marking that total incomplete."""
    t = Totals()
    for v in views:
        for attempt in (*v.earlier, v.turn):
            _add_spend(t, attempt)
        if v.ok is None:
            continue
        t.turns += 1
        t.failed += 0 if v.ok else 1
        t.agent_s += v.turn.duration_s or 0.0
        if "commands" in v.turn.evidence:
            t.observed_turns += 1
            t.commands_turns += 1 if v.turn.evidence["commands"] > 0 else 0
    return t


def _add_spend(t: Totals, v: TurnEnded) -> None:
    if v.failure in _NOTHING_RAN:
        return
    if v.cost_usd is None:
        t.cost_complete = False
    else:
        t.cost_usd = (t.cost_usd or 0.0) + v.cost_usd
    if not v.tokens:
        t.tokens_complete = False
    for k, n in v.tokens.items():
        t.tokens[k] = t.tokens.get(k, 0) + int(n)


def degradations(views: list[TurnView],
                 where_of: Callable[[TurnEnded], str] = lambda t: t.phase,
                 running: bool = False) -> list[str]:
    """One honest line per participant that failed: who, how many attempts failed, where (as
    the protocol says it) and what the last failure was. A member retried three times in a
    round is one line saying 3, not three lines. In a debate still ``running`` a turn without
    an end is at work, not interrupted."""
    failed: dict[str, list[TurnEnded]] = {}
    unfinished: dict[str, TurnEnded] = {}
    for v in views:
        t = v.turn
        if v.ok is False:
            # a turn run again by resume and failing again: its earlier failures count too
            failed.setdefault(t.participant, []).extend(
                [e for e in v.earlier if e.finished and not e.ok] + [t])
        elif v.ok is None and not running:
            unfinished.setdefault(t.participant, t)
    out = []
    for who in dict.fromkeys([*failed, *unfinished]):
        parts = [_failures(who, failed[who], where_of)] if who in failed else []
        if who in unfinished:
            t = unfinished[who]
            at = "" if where_of(t) == t.phase else f" in {where_of(t)}"   # e.g. its round
            cut = f"did not finish its {t.phase} turn{at} (interrupted)"
            parts.append(f"then {cut}" if parts else f"{who} {cut}")
        out.append("; ".join(parts))
    return out


def _failures(who: str, attempts: list[TurnEnded],
              where_of: Callable[[TurnEnded], str]) -> str:
    last = attempts[-1]
    # a timeout's message names the configured limit; the turn's duration adds the grace it
    # took to end the process, so it is not repeated here
    what = {"timeout": "timed out"}.get(last.failure or "", f"failed ({last.failure})")
    said = f"{what} in {where_of(last)}: {last.message}"
    if len(attempts) == 1:
        return f"{who} {said}"
    return f"{who} failed {len(attempts)} attempts; the last {said}"


_SESSION_STARTS = (DebateStarted.TYPE, Resumed.TYPE, AnswersGiven.TYPE, FinalizeRequested.TYPE)


def wall_seconds(events) -> float:
    """Wall time the debate ran, from the ledger's timestamps: each session (the first run, a
    resume, a --continue) counts from its first event to its last, not the idle time between."""
    from datetime import datetime

    total, start, last = 0.0, None, None
    for e in events:
        ts = datetime.fromisoformat(e.ts.replace("Z", "+00:00"))
        if e.type in _SESSION_STARTS or start is None:
            if start is not None and last is not None:
                total += (last - start).total_seconds()
            start = ts
        last = ts
    if start is not None and last is not None:
        total += (last - start).total_seconds()
    return total


def evidence_line(t: Totals) -> str:
    if not t.observed_turns:
        return "evidence: not observable (these CLIs do not report the commands they run)"
    return (f"evidence: {t.commands_turns} of {t.observed_turns} observed turns ran commands")


def evidence_warning(t: Totals, repo_mode: bool) -> str | None:
    """In repo mode, a debate where no observed turn ran anything rests on assertion alone."""
    if repo_mode and t.observed_turns and not t.commands_turns:
        return ("no participant ran a command (no test run, no git diff): the debate rests on "
                "reading and assertion")
    return None


def fmt_cost(t: Totals) -> str:
    if t.cost_usd is None:
        return "cost unknown"
    return f"${t.cost_usd:.2f}" + ("" if t.cost_complete else " (+ unknown)")


def fmt_tokens(tokens: dict[str, int], complete: bool = True) -> str:
    """A turn's tokens (input + output), or a total: ``complete=False`` marks a lower bound the
    way ``fmt_cost`` does."""
    if not tokens:
        return "tokens unknown"
    n = tokens.get("input", 0) + tokens.get("output", 0)
    text = f"{n / 1000:.0f}k tokens" if n >= 1000 else f"{n} tokens"
    return text + ("" if complete else " (+ unknown)")


def fmt_duration(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{seconds:.1f}s"
