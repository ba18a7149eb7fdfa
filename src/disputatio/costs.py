"""The debate-wide cost cap (``max_cost_usd``, ``--max-cost``): what a debate has spent, what
its next step would cost, and whether that step may run.

It reads only the ledger's turns and the step's prompts, so every protocol is held to the cap
by the loop in ``app`` without knowing of it. A step that would take the debate past the cap
does not start: the debate stops ``capped``, recorded, and carries on from that step when it is
resumed with a higher cap. Nothing here can see inside a turn, so a turn that costs far more
than its estimate still overshoots; CLIs that take a per-turn budget are given the remaining
share of the cap, which bounds that too (docs/architecture.md, "The cost cap").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from disputatio import adapters
from disputatio.events import (
    CostCapped,
    DebateStarted,
    EventData,
    Fenced,
    TurnEnded,
    TurnStarted,
    typed,
)

# CLIs whose answer carries what the turn cost (claude's total_cost_usd, pi's usage.cost);
# the others report tokens at most, which only a configured price turns into dollars
REPORTS_COST = frozenset({"claude", "pi", "simulated"})
# a prompt's tokens, guessed from its size before any turn of the debate has reported tokens
BYTES_PER_TOKEN = 4
# an answer's output tokens when no turn of the debate has reported any yet
DEFAULT_OUTPUT_TOKENS = 1_000
CAPPED = "capped"   # the status a debate stopped by its cap ends with (debate_ended, Outcome)

Price = Mapping[str, Any]   # input_per_mtok, output_per_mtok, cached_per_mtok (optional)


def price_for(prices: Mapping[str, Price] | None, model: str | None,
              adapter: str) -> Price | None:
    """The configured price of a turn's model, else of its CLI: a price under an adapter's
    name stands for its default model and any model not priced on its own."""
    if not prices:
        return None
    return (prices.get(model) if model else None) or prices.get(adapter)


def priced(tokens: Mapping[str, Any], price: Price) -> float:
    """USD for reported tokens: ``input`` holds the cached ones too (every adapter counts it
    so), which are billed at ``cached_per_mtok`` (default: the input price)."""
    def n(key: str) -> float:
        v = tokens.get(key)
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.0

    cached = min(n("cached"), n("input"))
    cached_price = price.get("cached_per_mtok")
    if cached_price is None:
        cached_price = price["input_per_mtok"]
    return ((n("input") - cached) * price["input_per_mtok"] + cached * cached_price
            + n("output") * price["output_per_mtok"]) / 1_000_000


def turn_cost(turn: TurnEnded, prices: Mapping[str, Price] | None) -> float | None:
    """What a finished turn cost: as its CLI reported it, else its tokens at the configured
    price, else unknown (None)."""
    if turn.cost_usd is not None:
        return float(turn.cost_usd)
    price = price_for(prices, turn.model, turn.adapter)
    if price is not None and turn.tokens:
        return priced(turn.tokens, price)
    return None


@dataclass(frozen=True)
class Sample:
    """One finished turn as the estimator reads it."""

    who: str
    adapter: str
    model: str | None
    prompt_bytes: int | None
    cost: float | None
    tokens: Mapping[str, int]
    turn_id: str


@dataclass(frozen=True)
class Ledgered:
    """What the ledger says of cost: the cap in force, the prices, and every finished turn."""

    cap: float | None
    prices: Mapping[str, Price]
    samples: tuple[Sample, ...]
    started_turns: int

    @property
    def spent(self) -> float:
        return sum(s.cost for s in self.samples if s.cost is not None)

    @property
    def uncounted(self) -> tuple[str, ...]:
        """Turns whose cost is unknown: they are not in ``spent``."""
        return tuple(s.turn_id for s in self.samples if s.cost is None)


def read(events: Iterable[Any]) -> Ledgered:
    """The cap is the last one a command set (``max_cost_usd`` of debate_started, resumed,
    answers_given, finalize_requested); each turn's prompt size comes from its turn_started."""
    cap: float | None = None
    prices: Mapping[str, Price] = {}
    asked: dict[str, int | None] = {}
    samples: list[Sample] = []
    started = 0
    for _, e in typed(events):
        if isinstance(e, Fenced) and e.max_cost_usd is not None:
            cap = float(e.max_cost_usd)
        if isinstance(e, DebateStarted):
            prices = e.prices or {}
        elif isinstance(e, TurnStarted):
            asked[e.turn_id] = e.prompt_bytes
            started += 1
        elif isinstance(e, TurnEnded):
            samples.append(Sample(e.participant, e.adapter, e.model, asked.pop(e.turn_id, None),
                                  turn_cost(e, prices), dict(e.tokens), e.turn_id))
    return Ledgered(cap, prices, tuple(samples), started)


def estimate(who: str, adapter: str, model: str | None, prompt_bytes: int,
             history: Iterable[Sample], prices: Mapping[str, Price] | None) -> float | None:
    """What one turn will cost, or None when nothing tells.

    1. The same participant's earlier turns with a known cost: their dollars per prompt byte
       times this prompt's size (prompts grow with the transcript; so, roughly, does the cost).
    2. Else the turns of other seats running the same CLI and model, the same way.
    3. Else the configured price: the prompt at ``BYTES_PER_TOKEN`` bytes a token in, and the
       debate's mean reported output tokens (``DEFAULT_OUTPUT_TOKENS`` before any) out.
    """
    seen = list(history)
    for pool in ([s for s in seen if s.who == who],
                 [s for s in seen if (s.adapter, s.model) == (adapter, model)]):
        known = [s for s in pool if s.cost is not None and s.prompt_bytes]
        if known:
            rate = sum(s.cost or 0.0 for s in known) / sum(s.prompt_bytes or 0 for s in known)
            return rate * prompt_bytes
    price = price_for(prices, model, adapter)
    if price is None:
        return None
    outs = [s.tokens["output"] for s in seen if s.tokens.get("output")]
    out = sum(outs) / len(outs) if outs else DEFAULT_OUTPUT_TOKENS
    return priced({"input": math.ceil(prompt_bytes / BYTES_PER_TOKEN), "output": out}, price)


@dataclass(frozen=True)
class Check:
    """The stop rule for one step, and the budgets its turns run under."""

    cap: float | None
    spent: float
    estimate: float                     # of the turns that could be estimated
    phase: str
    turns: tuple[str, ...]              # the step's turn ids
    unestimated: tuple[str, ...] = ()   # who takes a turn nothing could estimate
    uncounted: tuple[str, ...] = ()     # turns of the debate whose cost is unknown
    budgets: dict[str, float] = field(default_factory=dict)   # turn id -> USD
    opening: bool = False               # no turn of the debate has started yet

    @property
    def stop(self) -> bool:
        """The step would take the debate past its cap (or the cap is spent already)."""
        if self.cap is None:
            return False
        return self.spent >= self.cap or self.spent + self.estimate > self.cap


def check(events: Iterable[Any], step: Any, seat: Callable[[str], tuple[str, str | None]],
          prompt_bytes: Callable[[Any], int]) -> Check:
    """Check ``step`` (a ``protocols.base.Step``) against the ledger's cap. ``seat`` gives a
    participant's (adapter, model); ``prompt_bytes`` a turn spec's prompt size. Each turn's
    budget is an equal share of what is left of the cap once the estimates of the turns whose
    CLI takes no budget are set aside: run in parallel, the step's turns together stay within
    it, and no share goes to a CLI that cannot use it."""
    led = read(events)
    turns = tuple(t.turn_id for t in step.turns)
    opening = led.started_turns == 0
    if led.cap is None and not (opening and led.prices):   # nothing to estimate for
        return Check(None, led.spent, 0.0, step.phase, turns,
                     unestimated=tuple(t.participant for t in step.turns), opening=opening)
    total, unknown, budgeted, aside = 0.0, [], [], 0.0
    for spec in step.turns:
        adapter, model = seat(spec.participant)
        cost = estimate(spec.participant, adapter, model, prompt_bytes(spec), led.samples,
                        led.prices)
        if cost is None:
            unknown.append(spec.participant)
        else:
            total += cost
        if getattr(adapters.get(adapter), "budget_flag", None):
            budgeted.append(spec.turn_id)
        else:
            aside += cost or 0.0
    budgets: dict[str, float] = {}
    if led.cap is not None and budgeted:
        # whole hundredths of a cent, as a CLI's flag takes them; never 0, which some refuse
        left = max(0.0, led.cap - led.spent - aside) / len(budgeted)
        share = math.floor(left * 10_000 + 1e-6) / 10_000
        budgets = {tid: max(share, 0.0001) for tid in budgeted}
    return Check(led.cap, led.spent, total, step.phase, turns, tuple(unknown), led.uncounted,
                 budgets, opening)


def check_step(events: Iterable[Any], step: Any, seats: Mapping[str, Any]) -> Check:
    """``check`` for the engine's seats (name -> ``engine.Seat``), each prompt rendered as the
    engine will render it."""
    from disputatio import prompts

    def seat(name: str) -> tuple[str, str | None]:
        p = seats[name].participant
        return p.adapter, p.model

    return check(events, step, seat,
                 lambda spec: len(prompts.render(spec.template, spec.variables).encode()))


def capped_event(c: Check) -> CostCapped:
    return CostCapped(cap_usd=c.cap or 0, spent_usd=round(c.spent, 6),
                      estimate_usd=round(c.estimate, 6), phase=c.phase, turns=list(c.turns),
                      unestimated=list(c.unestimated), uncounted=list(c.uncounted))


def cap_field(max_cost_usd: float | None, kind: type[EventData]) -> dict[str, float]:
    """The cap a command sets, as its event of type ``kind`` records it (``Fenced`` events
    do); a cap that is not a finite number above 0 is a usage error."""
    from disputatio.outcome import UsageError

    if max_cost_usd is None:
        return {}
    if not (math.isfinite(max_cost_usd) and max_cost_usd > 0):
        raise UsageError(f"--max-cost must be a finite number above 0, not {max_cost_usd}")
    if "max_cost_usd" not in kind.model_fields:
        raise UsageError("--max-cost cannot be given with this request")
    return {"max_cost_usd": max_cost_usd}


def usd(x: float) -> str:
    """Dollars as people read them: cents, or four places below a cent."""
    return f"${x:.2f}" if x >= 0.01 or x == 0 else f"${x:.4f}"


def opening_line(c: Check) -> str | None:
    """Before the debate starts, when every turn of its first step has a price: one line."""
    if not c.opening or c.unestimated or not c.turns:
        return None
    n = len(c.turns)
    line = (f"estimated cost of the first step ({c.phase}, {n} turn{'s' if n > 1 else ''}): "
            f"about {usd(c.estimate)} at the configured prices")
    if c.cap is not None:
        line += f"; the cap of {usd(c.cap)} is checked before every step"
    return line


def reason(c: Check) -> str:
    """Why the debate stopped, in one sentence (debate_ended's reason)."""
    return (f"the {c.phase} step would cost about {usd(c.estimate)} with {usd(c.spent)} spent, "
            f"past the cost cap of {usd(c.cap or 0)}")


def needed(c: Check) -> float:
    """A cap under which the step would run: spent and estimate, up to the next cent."""
    return (math.floor((c.spent + c.estimate) * 100) + 1) / 100


def capped_message(c: Check, debate_dir: Any) -> str:
    """What the command says when the cap stopped the debate (``Outcome.message``)."""
    return (f"stopped by the cost cap: {reason(c)}; resume with a higher cap: disputatio "
            f"resume --max-cost {needed(c):.2f} --debate {debate_dir}")


def unenforceable(seats: Iterable[Any], prices: Mapping[str, Price] | None) -> list[str]:
    """Lineup warnings: seats whose spend the cap cannot see (a CLI reporting no cost, no
    price configured, or no tokens reported at all)."""
    out = []
    for p in seats:
        if p.adapter in REPORTS_COST:
            continue
        if adapters.get(p.adapter).kind == adapters.CUSTOM:
            out.append(f"the cost cap cannot be enforced for {p.display}: a custom command "
                       "reports neither cost nor tokens")
        elif price_for(prices, p.model, p.adapter) is None:
            out.append(f"the cost cap cannot be enforced for {p.display}: {p.adapter} reports "
                       f"no cost and the lineup has no price for {p.model or p.adapter} "
                       "(prices:)")
    return out
