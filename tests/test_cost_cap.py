"""The cost cap's parts: what a turn cost (reported, or tokens at a configured price), what the
next turn will cost (the estimator), and the stop rule with the budgets it hands out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from disputatio import config, costs
from disputatio.adapters import claude, codex, pi
from disputatio.events import (
    CostCapped,
    DebateStarted,
    EventData,
    Resumed,
    TurnCompleted,
    TurnStarted,
)
from disputatio.protocols.base import Step, TurnSpec
from support.captures import real

PRICE = {"input_per_mtok": 2.0, "output_per_mtok": 10.0, "cached_per_mtok": 0.2}


@dataclass
class Ev:
    type: str
    data: dict[str, Any]
    seq: int = 0


def ev(model: EventData) -> Ev:
    return Ev(model.TYPE, model.to_data())


def started(cap: float | None = None, prices: dict | None = None) -> Ev:
    return ev(DebateStarted(quaestio="q", rounds=1, participants=["a", "b"], max_cost_usd=cap,
                            prices=prices))


def turn(tid: str, who: str, prompt_bytes: int, cost: float | None, adapter: str = "claude",
         model: str | None = None, tokens: dict | None = None) -> list[Ev]:
    base = {"turn_id": tid, "role": who, "seat": "participant", "phase": "p", "round": 0,
            "adapter": adapter, "model": model}
    return [ev(TurnStarted(**base, prompt_bytes=prompt_bytes)),
            ev(TurnCompleted(**base, ok=True, text="x", cost_usd=cost, tokens=tokens or {}))]


def step(*who: str) -> Step:
    return Step("reactions 1/1", tuple(TurnSpec(f"reaction-1/{w}", w, "participant",
                                                "reaction", 1, "t") for w in who))


def check(events: list[Ev], st: Step, size: int = 2000,
          seats: dict[str, tuple[str, str | None]] | None = None) -> costs.Check:
    def seat(name: str) -> tuple[str, str | None]:
        return (seats or {}).get(name, ("claude", None))
    return costs.check(events, st, seat, lambda spec: size)


# --- what a turn cost -------------------------------------------------------------------------

def test_tokens_at_a_price_bill_cached_input_at_the_cached_price():
    tokens = {"input": 1000, "cached": 400, "output": 100}
    assert costs.priced(tokens, PRICE) == pytest.approx((600 * 2 + 400 * 0.2 + 100 * 10) / 1e6)
    no_cached_price = {"input_per_mtok": 2.0, "output_per_mtok": 10.0}
    assert costs.priced(tokens, no_cached_price) == pytest.approx((1000 * 2 + 100 * 10) / 1e6)


def test_a_reported_cost_is_taken_as_is_and_tokens_are_priced_only_without_one():
    said = claude.ADAPTER.parse(real("claude/success"))        # reports $0.000141
    counted = codex.ADAPTER.parse(real("codex/tool_cat"))      # tokens, no cost
    base = {"turn_id": "t", "role": "a", "phase": "p", "round": 0}
    c = TurnCompleted(**base, adapter="claude", ok=True, cost_usd=said.cost_usd,
                      tokens=said.tokens)
    x = TurnCompleted(**base, adapter="codex", model="gpt-9", ok=True, tokens=counted.tokens)
    assert costs.turn_cost(c, {"claude": PRICE}) == 0.000141
    assert costs.turn_cost(x, {}) is None
    assert costs.turn_cost(x, {"gpt-9": PRICE}) == pytest.approx((24 * 2 + 16 * 10) / 1e6)
    # the CLI's price stands for any of its models without one of its own
    dear = {"input_per_mtok": 20.0, "output_per_mtok": 100.0}
    assert costs.turn_cost(x, {"codex": dear}) == pytest.approx((24 * 20 + 16 * 100) / 1e6)
    assert costs.turn_cost(x, {"codex": dear, "gpt-9": PRICE}) == \
        pytest.approx((24 * 2 + 16 * 10) / 1e6)


def test_pi_reports_a_cost_the_cap_counts():
    r = pi.ADAPTER.parse(real("pi/success_cost"))
    evs = [started(1.0), *turn("proposal/a", "a", 100, r.cost_usd, adapter="pi")]
    assert costs.read(evs).spent == pytest.approx(0.000235)


# --- the estimator ----------------------------------------------------------------------------

def test_a_turn_is_estimated_from_its_participants_cost_per_prompt_byte():
    hist = costs.read([started(), *turn("p/a", "a", 1000, 0.10), *turn("p/b", "b", 1000, 0.50),
                       *turn("r/a", "a", 3000, 0.20)]).samples
    # a: $0.30 over 4,000 bytes; b's dearer turns do not count for a
    assert costs.estimate("a", "claude", None, 8000, hist, {}) == pytest.approx(0.6)
    assert costs.estimate("b", "claude", None, 2000, hist, {}) == pytest.approx(1.0)


def test_a_seat_without_turns_is_estimated_from_the_same_cli_and_model_then_the_price():
    hist = costs.read([started(), *turn("p/a", "a", 1000, 0.10, model="m1"),
                       *turn("p/b", "b", 1000, None, adapter="codex", model="m2",
                             tokens={"input": 900, "output": 300})]).samples
    assert costs.estimate("judge", "claude", "m1", 5000, hist, {}) == pytest.approx(0.5)
    # no cost of m2 anywhere: its price, the prompt at 4 bytes a token and the debate's mean
    # output of reported tokens (300)
    assert costs.estimate("judge", "codex", "m2", 4000, hist, {"m2": PRICE}) == \
        pytest.approx((1000 * 2 + 300 * 10) / 1e6)
    assert costs.estimate("judge", "codex", "m3", 4000, hist, {}) is None
    # before any turn, the output is guessed
    assert costs.estimate("a", "codex", "m2", 4000, [], {"m2": PRICE}) == \
        pytest.approx((1000 * 2 + costs.DEFAULT_OUTPUT_TOKENS * 10) / 1e6)


# --- the stop rule ----------------------------------------------------------------------------

def test_a_step_that_would_pass_the_cap_stops_and_one_that_fits_runs_with_shares():
    evs = [started(cap=1.0), *turn("p/a", "a", 1000, 0.20), *turn("p/b", "b", 1000, 0.20)]
    fits = check(evs, step("a", "b"), size=1500)          # 0.4 spent + 0.6 = 1.0: at the cap
    assert fits.spent == pytest.approx(0.4) and fits.estimate == pytest.approx(0.6)
    assert not fits.stop
    assert fits.budgets == {"reaction-1/a": 0.3, "reaction-1/b": 0.3}
    over = check(evs, step("a", "b"), size=1600)          # 0.4 + 0.64 > 1.0
    assert over.stop
    event = costs.capped_event(over)
    assert isinstance(event, CostCapped) and event.turns == ["reaction-1/a", "reaction-1/b"]
    assert costs.needed(over) == pytest.approx(1.05)
    assert "resume --max-cost 1.05 --debate D" in costs.capped_message(over, "D")


def test_budget_shares_go_only_to_clis_that_take_one_after_the_others_estimates():
    # a (claude) and c (codex, priced) each spent $0.20 on a 1,000-byte prompt; the cap is $1
    evs = [started(cap=1.0, prices={"m": PRICE}), *turn("p/a", "a", 1000, 0.20),
           *turn("p/c", "c", 1000, None, adapter="codex", model="m",
                 tokens={"input": 50_000, "output": 10_000})]
    seats = {"a": ("claude", None), "c": ("codex", "m")}
    c = check(evs, step("a", "c"), size=1000, seats=seats)
    # c's turn is estimated as its last (its tokens at the price: $0.20 for as many bytes) and
    # set aside; a alone gets what is left: 1.0 - 0.4 spent - 0.2 = 0.4 (not 0.3 each, half
    # of it handed to c, which cannot use it)
    assert c.spent == pytest.approx(0.4) and c.estimate == pytest.approx(0.4) and not c.stop
    assert c.budgets == {"reaction-1/a": pytest.approx(0.4, abs=1e-4)}
    # a step of CLIs that take no budget is handed none
    assert check(evs, step("c"), size=1000, seats=seats).budgets == {}


def test_a_spent_cap_stops_even_a_step_nothing_can_estimate():
    evs = [started(cap=0.3), *turn("p/a", "a", 1000, 0.30)]
    c = check(evs, step("x"), seats={"x": ("command", None)})
    assert c.unestimated == ("x",) and c.estimate == 0 and c.stop
    under = [started(cap=0.5), *turn("p/a", "a", 1000, 0.30)]
    assert not check(under, step("x"), seats={"x": ("command", None)}).stop


def test_turns_of_unknown_cost_are_named_and_left_out_of_what_was_spent():
    evs = [started(cap=1.0), *turn("p/a", "a", 1000, 0.30),
           *turn("p/c", "c", 1000, None, adapter="codex")]
    c = check(evs, step("a"))
    assert c.spent == pytest.approx(0.3) and c.uncounted == ("p/c",)


def test_the_last_cap_a_command_set_stands():
    evs = [started(cap=0.3), *turn("p/a", "a", 1000, 0.30)]
    assert check(evs, step("a")).stop
    raised = evs + [ev(Resumed(max_cost_usd=2))]
    c = check(raised, step("a"))
    assert c.cap == 2 and not c.stop and c.budgets == {"reaction-1/a": 1.7}
    kept = raised + [ev(Resumed())]                       # a resume without --max-cost
    assert check(kept, step("a")).cap == 2


def test_without_a_cap_nothing_stops_and_no_budget_is_handed_out():
    evs = [started(), *turn("p/a", "a", 1000, 50.0)]
    c = check(evs, step("a"))
    assert c.cap is None and not c.stop and c.budgets == {}


def test_the_opening_estimate_needs_a_price_for_every_turn_of_the_first_step():
    evs = [started(cap=5.0, prices={"m": PRICE})]
    priced = check(evs, step("a", "b"), size=4000, seats={"a": ("codex", "m"),
                                                         "b": ("codex", "m")})
    line = costs.opening_line(priced)
    each = (1000 * 2 + costs.DEFAULT_OUTPUT_TOKENS * 10) / 1e6
    assert line == (f"estimated cost of the first step (reactions 1/1, 2 turns): about "
                    f"{costs.usd(2 * each)} at the configured prices; the cap of $5.00 is "
                    "checked before every step")
    half = check(evs, step("a", "b"), seats={"a": ("codex", "m"), "b": ("gemini", None)})
    assert costs.opening_line(half) is None
    later = evs + turn("p/a", "a", 10, 0.1)
    assert costs.opening_line(check(later, step("a"), seats={"a": ("codex", "m")})) is None
    # without a cap or prices nothing is estimated, and no "$0.00" is claimed
    assert costs.opening_line(check([started()], step("a", "b"))) is None


# --- the lineup warning -----------------------------------------------------------------------

def _cfg(text: str) -> config.DebateConfig:
    return config.parse_text(text, "d.yaml")


def test_the_lineup_names_each_seat_the_cap_cannot_see():
    cfg = _cfg("""
max_cost_usd: 2
prices: {gpt-9: {input_per_mtok: 1.25, output_per_mtok: 10}}
participants:
  - {adapter: claude, name: cl}
  - {adapter: codex, name: priced, model: gpt-9}
  - {adapter: gemini, name: gm}
  - {adapter: command, name: cmd, argv: [x]}
judge: {adapter: pi, name: j}
""")
    said = config.cost_warnings(cfg)
    assert said == [
        "the cost cap cannot be enforced for gm: gemini reports no cost and the lineup has no "
        "price for gemini (prices:)",
        "the cost cap cannot be enforced for cmd: a custom command reports neither cost nor "
        "tokens"]
    uncapped = cfg.model_copy(update={"max_cost_usd": None})
    assert config.cost_warnings(uncapped) == []


@pytest.mark.parametrize("bad", ["0", "-1", ".inf", ".nan", "'2'"])
def test_a_cap_in_the_lineup_must_be_a_positive_finite_number(bad):
    with pytest.raises(config.ConfigError, match="max_cost_usd"):
        _cfg(f"max_cost_usd: {bad}\nparticipants: [{{adapter: simulated, name: a}}, "
             "{adapter: simulated, name: b}]\n")


def test_a_command_records_a_cap_only_on_an_event_that_holds_one():
    from disputatio.events import AnswersGiven, HumanActed
    from disputatio.outcome import UsageError

    assert costs.cap_field(None, Resumed) == {}
    assert costs.cap_field(2.5, Resumed) == {"max_cost_usd": 2.5}
    assert costs.cap_field(1, AnswersGiven) == {"max_cost_usd": 1}
    with pytest.raises(UsageError, match="cannot be given with this request"):
        costs.cap_field(1.0, HumanActed)
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(UsageError, match="--max-cost must be a finite number above 0"):
            costs.cap_field(bad, Resumed)
