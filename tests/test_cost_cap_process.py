"""The debate-wide cost cap end to end: fake claudes that bill what the real one reports,
a debate stopped before the step that would pass the cap, then resumed with a higher one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from support import FAKES, own_python, run_cli, sim, write_config

pytestmark = pytest.mark.process

def _priced(home: Path) -> Path:
    """A claude that answers and bills, beside the working directory."""
    return own_python(FAKES / "priced.py", home.parent)


def _lineup(home: Path, **top) -> Path:
    priced = _priced(home)
    debaters = [{"adapter": "claude", "name": n, "bin": str(priced)} for n in ("ada", "bo")]
    return write_config(home / "d.yaml", debaters, judge=sim("judge"), rounds=1, **top)


def _events(debate: Path) -> list[dict]:
    return [json.loads(line) for line in (debate / "events.jsonl").read_text().splitlines()]


def _spent(evs: list[dict]) -> float:
    return sum(e["data"]["cost_usd"] or 0 for e in evs if e["type"] == "turn_completed")


def test_the_cap_stops_before_the_step_that_would_pass_it_and_a_higher_cap_finishes(home):
    argv_dir = home / "argv"
    argv_dir.mkdir()
    env = {"PRICED_COST": "0.10", "PRICED_ARGV_DIR": str(argv_dir)}
    r = run_cli("Should we?", "--config", str(_lineup(home)), "--max-cost", "0.35", "-q",
                cwd=home, env=env)
    assert r.returncode == 1, r.stderr
    assert "stopped by the cost cap" in r.stderr
    assert "resume with a higher cap: disputatio resume --max-cost" in r.stderr
    # claude has no price and reports a cost: no warning that the cap cannot see it
    assert "cannot be enforced" not in r.stderr
    debate = next((home / ".debate").glob("debate-*"))
    evs = _events(debate)
    assert evs[0]["data"]["max_cost_usd"] == 0.35
    # the proposals ran (nothing was known before them); the reactions, each estimated from
    # its participant's proposal and a longer prompt, would have passed $0.35: not started
    assert sorted(e["data"]["turn_id"] for e in evs if e["type"] == "turn_started") == \
        ["proposal/ada", "proposal/bo"]
    capped = next(e["data"] for e in evs if e["type"] == "cost_capped")
    assert capped["cap_usd"] == 0.35 and abs(capped["spent_usd"] - 0.2) < 1e-9
    assert capped["spent_usd"] + capped["estimate_usd"] > 0.35
    assert capped["phase"] == "reactions 1/1" and capped["unestimated"] == []
    assert sorted(capped["turns"]) == ["reaction-1/ada", "reaction-1/bo"]
    assert evs[-1]["type"] == "debate_ended" and evs[-1]["data"]["status"] == "capped"
    assert _spent(evs) <= 0.35
    # each proposal ran under its share of the cap, claude's own per-turn budget
    for f in argv_dir.iterdir():
        argv = json.loads(f.read_text())
        assert argv[argv.index("--max-budget-usd") + 1] == "0.175"

    # the same cap again: nothing runs, the debate stays capped
    again = run_cli("resume", "--debate", str(debate), "-q", cwd=home, env=env)
    assert again.returncode == 1 and "stopped by the cost cap" in again.stderr
    started = [e for e in _events(debate) if e["type"] == "turn_started"]
    assert len(started) == 2

    # a higher cap: the debate carries on from the reactions and ends
    done = run_cli("resume", "--debate", str(debate), "--max-cost", "1", "-q", cwd=home, env=env)
    assert done.returncode == 0, done.stderr
    evs = _events(debate)
    resumed = [e["data"] for e in evs if e["type"] == "resumed"]
    assert resumed[-1]["max_cost_usd"] == 1
    ran = [e["data"]["turn_id"] for e in evs if e["type"] == "turn_completed"]
    assert ran.count("proposal/ada") == 1 and "reaction-1/ada" in ran and "reaction-1/bo" in ran
    assert evs[-1]["type"] == "debate_ended" and evs[-1]["data"]["status"] == "resolved"
    assert abs(_spent(evs) - 0.4) < 1e-9
    budgets = sorted(json.loads(f.read_text())[json.loads(f.read_text()).index(
        "--max-budget-usd") + 1] for f in argv_dir.iterdir())
    assert budgets == ["0.175", "0.175", "0.4", "0.4"]   # (1 - 0.2) / 2 for each reaction


def test_prices_give_an_estimate_before_the_debate_starts(home):
    prices = {"claude": {"input_per_mtok": 3, "output_per_mtok": 15, "cached_per_mtok": 0.3}}
    r = run_cli("Should we?", "--config", str(_lineup(home, prices=prices)), "--max-cost",
                "5", cwd=home, env={"PRICED_COST": "0.01"})
    assert r.returncode == 0, r.stderr
    line = next(ln for ln in r.stderr.splitlines() if ln.startswith("estimated cost"))
    debate = next((home / ".debate").glob("debate-*"))
    evs = _events(debate)
    assert evs[0]["data"]["prices"] == prices
    # each proposal's prompt at 4 bytes a token in, 1,000 tokens out, at $3 and $15 a million
    sizes = [e["data"]["prompt_bytes"] for e in evs if e["type"] == "turn_started"][:2]
    expected = sum(-(-b // 4) * 3 + 1000 * 15 for b in sizes) / 1e6
    assert line == (f"estimated cost of the first step (proposals, 2 turns): about "
                    f"${expected:.2f} at the configured prices; the cap of $5.00 is checked "
                    "before every step")


def test_a_cli_that_reports_no_cost_is_named_in_a_warning(home, tmp_path):
    codex = tmp_path / "codex"
    capture = Path(__file__).parent / "fixtures" / "captures" / "codex" / "success.stdout"
    codex.write_text(f"#!/usr/bin/env python3\nimport sys\nif '--version' in sys.argv:\n"
                     f"    print('codex-cli 0.171.0'); sys.exit(0)\nsys.stdin.read()\n"
                     f"sys.stdout.write(open({str(capture)!r}).read())\n")
    codex.chmod(0o755)
    cfg = write_config(home / "d.yaml", [{"adapter": "codex", "name": "cx", "bin": str(codex)},
                                         sim("b")], rounds=0, max_cost_usd=1)
    r = run_cli("Should we?", "--config", str(cfg), "-q", cwd=home)
    assert "the cost cap cannot be enforced for cx: codex reports no cost" in r.stderr


def test_a_cap_that_is_not_a_positive_finite_number_is_refused(home):
    cfg = _lineup(home)
    for bad in ("0", "-1", "inf", "nan"):
        r = run_cli("q", "--config", str(cfg), "--max-cost", bad, cwd=home)
        assert r.returncode == 2, bad
        assert "--max-cost" in r.stderr and "Traceback" not in r.stderr
    assert not (home / ".debate").exists()


@pytest.mark.parametrize("protocol,cap,phase", [("committee", "0.45", "round 2/3"),
                                                 ("wind-wall-door", "0.25", "turn 3 · Door")])
def test_every_protocol_is_held_to_the_cap(home, protocol, cap, phase):
    """Three members at $0.10 a turn: the committee's second round (three turns) and the
    Door's first turn would each pass the cap; neither protocol knows of it."""
    priced = _priced(home)
    members = [{"adapter": "claude", "name": n, "bin": str(priced)} for n in ("ada", "bo", "cy")]
    cfg = home / "c.yaml"
    top = {"protocol": {"max_rounds": 3}} if protocol == "committee" else {}
    cfg.write_text(yaml.safe_dump({**top, "participants": members}))
    r = run_cli("run", "--protocol", protocol, "--config", str(cfg), "--max-cost", cap, "-q",
                "Tabs or spaces?", cwd=home)
    assert r.returncode == 1, r.stderr
    debate = next((home / ".debate").glob("debate-*"))
    evs = _events(debate)
    capped = next(e["data"] for e in evs if e["type"] == "cost_capped")
    assert capped["phase"] == phase
    assert _spent(evs) <= float(cap) < capped["spent_usd"] + capped["estimate_usd"]
    assert not set(capped["turns"]) & {e["data"]["turn_id"] for e in evs
                                       if e["type"] == "turn_started"}
    assert evs[-1]["data"]["status"] == "capped"
