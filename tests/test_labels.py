"""Judging without bias: agents read debaters under neutral labels only, each judge reads the
answers of a round in an order shuffled for it with a seed the ledger records (so a resumed
turn sees exactly what the first attempt saw), and a judge of a debater's own vendor is
recused when the lineup has another choice — and the lineup warning says what will happen."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from disputatio import config, ledger, prompts
from disputatio.events import DebateStarted
from disputatio.protocols import disputatio as proto
from disputatio.protocols import labels
from support import invoke, sim, write_config

CAPTURES = Path(__file__).parent / "fixtures" / "captures"


@dataclass
class Ev:
    type: str
    data: dict


def started(participants=("ann", "bo", "cy"), rounds=1, **extra) -> Ev:
    return Ev("debate_started", {"quaestio": "Q?", "rounds": rounds,
                                 "participants": list(participants), "judge": "judge",
                                 "synthesizer": "judge", **extra})


def answered(turn_id: str, who: str, phase: str, rnd: int = 0) -> Ev:
    return Ev("turn_completed", {"turn_id": turn_id, "role": who, "phase": phase, "round": rnd,
                                 "ok": True, "text": f"an answer in round {rnd}"})


def through_reactions(rounds: int = 1, **extra) -> list[Ev]:
    evs = [started(rounds=rounds, **extra)]
    evs += [answered(proto.proposal_id(p), p, "proposal") for p in ("ann", "bo", "cy")]
    for r in range(1, rounds + 1):
        evs += [answered(proto.reaction_id(r, p), p, "reaction", r) for p in ("ann", "bo", "cy")]
    return evs


def headings(text: str) -> list[str]:
    return re.findall(r"^### (.+)$", text, re.M)


# --- labels -------------------------------------------------------------------------------

def test_labels_are_letters_in_lineup_order_and_never_run_out():
    assert labels.assign(["x", "y", "z"]) == {"x": "Participant A", "y": "Participant B",
                                              "z": "Participant C"}
    assert [labels.letters(i) for i in (0, 25, 26, 27, 51, 52, 701, 702)] == \
        ["A", "Z", "AA", "AB", "AZ", "BA", "ZZ", "AAA"]
    assert len(set(labels.assign([str(i) for i in range(800)]).values())) == 800


def test_recorded_labels_win_and_a_ledger_without_them_gets_lineup_order():
    recorded = DebateStarted(quaestio="q", rounds=0, participants=["a", "b"],
                             labels={"a": "Participant B", "b": "Participant A"})
    assert labels.of(recorded) == {"a": "Participant B", "b": "Participant A"}
    old = DebateStarted(quaestio="q", rounds=0, participants=["a", "b"])
    assert labels.of(old) == {"a": "Participant A", "b": "Participant B"}
    # a name the record lacks gets a free letter, never its own name
    partial = DebateStarted(quaestio="q", rounds=0, participants=["a", "b", "c"],
                            labels={"a": "Participant A", "b": "Participant C"})
    assert labels.of(partial)["c"] == "Participant B"


def test_debaters_are_named_by_label_in_every_prompt_and_told_who_they_are():
    s = proto.state([started()])
    step = proto.next_step(s)
    prompt = prompts.render(step.turns[1].template, step.turns[1].variables)
    assert "You are Participant B (phase: proposal)" in prompt
    assert not re.search(r"\b(ann|bo|cy)\b", prompt)
    s = proto.state(through_reactions(rounds=2)[:7])      # proposals and round 1
    step = proto.next_step(s)
    prompt = prompts.render(step.turns[2].template, step.turns[2].variables)
    assert headings(prompt) == [f"{t} — Participant {x}" for t in
                                ("Proposal", "Reaction, round 1") for x in "ABC"]
    assert "You are Participant C (phase: reaction, round 2 of 2)" in prompt
    assert not re.search(r"\b(ann|bo|cy)\b", prompt)


def test_the_human_agreeing_with_a_debater_names_its_label_after_that_round():
    evs = through_reactions(rounds=2)[:7]
    evs.insert(4, Ev("human_acted", {"key": "round-0", "round": 0, "action": "agree",
                                     "participant": "cy", "strength": 2}))
    text = proto.render_transcript(proto.state(evs), upto_round=1)
    assert "the human agrees with Participant C (strength 2 of 3)" in text
    assert not re.search(r"\bcy\b", text)
    # chronological: after the proposals, before round 1
    assert text.index("The human in the loop") < text.index("Reaction, round 1")


# --- the shuffle --------------------------------------------------------------------------

def test_a_shuffle_is_fixed_by_seed_reader_and_place_and_moves_with_each():
    items = list("ABCDEFGH")
    once = labels.shuffled(items, 7, "judge", "round-0")
    assert once == labels.shuffled(items, 7, "judge", "round-0") and sorted(once) == items
    others = {tuple(labels.shuffled(items, seed, reader, place))
              for seed in (7, 8) for reader in ("judge", "juror") for place in ("r0", "r1")}
    assert len(others) == 8     # 8! orders: a collision would mean the inputs are ignored


def test_a_recorded_seed_gives_the_same_order_in_every_version():
    # ledgers keep only the seed: the order it gives must never change, or a resumed debate
    # would show its judge another transcript than the first attempt saw
    assert labels.shuffled(list("ABCDE"), 42, "judge", "round-0") == list("EBCAD")
    assert labels.shuffled(list("ABCDE"), 42, "judge", "round-1") == list("BCDEA")


def test_each_judge_reads_every_round_in_its_own_recorded_order_debaters_in_label_order():
    seed = next(n for n in range(100)   # a seed under which the judge's order is not A, B, C
                if labels.shuffled([0, 1, 2], n, "judge", "round-0") != [0, 1, 2])
    s = proto.state(through_reactions(rounds=1, seed=seed))
    judge = proto.render_transcript(s, upto_round=1, reader="judge")
    debater = proto.render_transcript(s, upto_round=1)
    names = labels.of(s.started)
    for rnd, title in ((0, "Proposal"), (1, "Reaction, round 1")):
        order = labels.shuffled(["ann", "bo", "cy"], seed, "judge", f"round-{rnd}")
        shown = [h.split(" — ")[1] for h in headings(judge) if h.startswith(title)]
        assert shown == [names[p] for p in order]
    assert [h.split(" — ")[1] for h in headings(debater)][:3] == \
        ["Participant A", "Participant B", "Participant C"]
    assert headings(judge)[:3] != headings(debater)[:3]
    # the same ledger gives the same order again (another state, another call)
    assert proto.render_transcript(proto.state(through_reactions(rounds=1, seed=seed)),
                                   upto_round=1, reader="judge") == judge


def test_a_resumed_judge_reads_what_its_first_attempt_read(home, tmp_path):
    once = tmp_path / "judge-failed-once"
    judge = {"adapter": "simulated", "name": "judge", "model": "judge",
             "env": {"DISPUTATIO_SIM_FAIL_ONCE": str(once)}}
    cfg = write_config(home / "d.yaml", [sim("ann"), sim("bo"), sim("cy")], judge=judge,
                       rounds=1)
    first = invoke("q", "--config", str(cfg), "-q", cwd=home)
    assert first.returncode == 1 and once.exists(), first.stderr
    debate = next(p for p in (home / ".debate").iterdir() if p.is_dir())
    again = invoke("resume", "--debate", str(debate), "-q", cwd=home)
    assert again.returncode == 0, again.stderr
    asked = sorted((debate / "raw").glob("*-respondeo-1.prompt.md"))
    assert len(asked) == 2
    assert asked[0].read_bytes() == asked[1].read_bytes()
    evs = ledger.load(debate / "events.jsonl")
    seed = evs[0].data["seed"]
    assert isinstance(seed, int) and evs[0].data["labels"] == {
        "ann": "Participant A", "bo": "Participant B", "cy": "Participant C"}
    order = labels.shuffled(["ann", "bo", "cy"], seed, "judge", "round-0")
    shown = [h.split(" — ")[1] for h in headings(asked[0].read_text())
             if h.startswith("Proposal")]
    assert shown == [evs[0].data["labels"][p] for p in order]


# --- recusal ------------------------------------------------------------------------------

def lineup(*adapters_, judge: str, recusal: str = "vendor", models=None, judge_model=None):
    models = models or [None] * len(adapters_)
    return config.DebateConfig(
        recusal=recusal,
        participants=[{"adapter": a, "name": f"p{i}", "model": m}
                      for i, (a, m) in enumerate(zip(adapters_, models, strict=True))],
        judge={"adapter": judge, "name": "judge", "model": judge_model})


def test_conflicts_by_vendor_by_model_or_none():
    assert config.conflicts(lineup("claude", "codex", judge="claude")) == {"judge": ["p0"]}
    assert config.conflicts(lineup("claude", "codex", "gemini", judge="gemini")) == \
        {"judge": ["p2"]}
    assert config.conflicts(lineup("claude", "codex", judge="gemini")) == {}
    assert config.conflicts(lineup("claude", "codex", judge="claude", recusal="off")) == {}
    # model: only the same CLI and model; the CLI's default model is one model
    same = lineup("claude", "claude", judge="claude", recusal="model", models=["a", "b"],
                  judge_model="b")
    assert config.conflicts(same) == {"judge": ["p1"]}
    assert config.conflicts(lineup("claude", "codex", judge="claude", recusal="model")) == \
        {"judge": ["p0"]}
    assert config.conflicts(lineup("claude", "codex", judge="claude", recusal="model",
                                   models=["a", None], judge_model="b")) == {}
    # the simulation and a configured command have no vendor to favour
    assert config.conflicts(lineup("simulated", "simulated", judge="simulated")) == {}


def test_a_conflicted_judge_is_recused_only_when_another_judge_is_free():
    assert config.recused({"j1": ["p0"]}, ["j1", "j2"]) == ["j1"]
    assert config.recused({"j1": ["p0"], "j2": ["p1"]}, ["j1", "j2"]) == []
    assert config.recused({"j1": ["p0"]}, ["j1"]) == []
    assert config.recused({}, ["j1", "j2"]) == []


def test_the_lineup_warning_says_what_recusal_will_do():
    warned = config.lineup_warnings(lineup("claude", "codex", judge="claude", judge_model="j"))
    assert warned == ["the judge shares a vendor (Anthropic) with p0 and the lineup has no "
                      "judge without such a conflict, so it rules on their arguments anyway "
                      "(recusal: vendor)"]
    assert config.lineup_warnings(lineup("claude", "codex", judge="claude", recusal="off",
                                         judge_model="j")) == \
        ["the judge shares a vendor (Anthropic) with p0"]
    # a judge that is a debater's very CLI and model is warned of once
    assert config.lineup_warnings(lineup("claude", "codex", judge="claude")) == \
        ["the judge is the same CLI and model as debater p0; it will rule on its own arguments"]
    assert config.lineup_warnings(lineup("claude", "codex", judge="gemini")) == []
    record = config.recusal_record(lineup("claude", "codex", judge="claude"))
    assert record == {"mode": "vendor", "conflicts": {"judge": ["p0"]}, "recused": []}


def test_recusal_is_a_lineup_key_with_three_values(tmp_path):
    text = "recusal: {}\nparticipants:\n  - adapter: claude\n  - adapter: codex\n"
    assert config.parse_text(text.format("model"), "x.yaml").recusal == "model"
    assert config.parse_text(text.replace("recusal: {}\n", ""), "x.yaml").recusal == "vendor"
    with pytest.raises(config.ConfigError, match=r"^x.yaml:1: recusal: "):
        config.parse_text(text.format("always"), "x.yaml")


def test_the_ledger_labels_record_what_old_ledgers_lack():
    evs = ledger.load(Path(__file__).parent / "fixtures" / "ledgers" / "v0.1.0-e26cab3"
                      / "events.jsonl")
    s = proto.state(evs)
    assert s.started.labels is None and s.started.seed is None
    assert list(labels.of(s.started).values())[:2] == ["Participant A", "Participant B"]
    assert labels.recused(s.started) == [] and labels.conflicts(s.started) == {}


# --- what a prompt may never hold -----------------------------------------------------------

def fake_cli(path: Path, version: str, capture: str) -> Path:
    """A stand-in for a real CLI: ``--version`` answers, a turn prints a real capture."""
    path.write_text(f"#!{sys.executable}\nimport sys\n"
                    f"if '--version' in sys.argv:\n    print({version!r}); sys.exit(0)\n"
                    "sys.stdin.read()\n"
                    f"sys.stdout.write(open({str(CAPTURES / capture)!r}).read())\n")
    path.chmod(0o755)
    return path


def test_no_prompt_names_a_participant_its_cli_vendor_or_model(home, tmp_path):
    claude = fake_cli(tmp_path / "claude", "2.1.197 (Claude Code)", "claude/success.stdout")
    codex = fake_cli(tmp_path / "codex", "codex-cli 0.171.0", "codex/success.stdout")
    gemini = fake_cli(tmp_path / "gemini", "0.61.0", "gemini/success.stdout")
    cfg = write_config(
        home / "d.yaml",
        [{"adapter": "claude", "name": "zephyrine", "model": "opus-quartz", "bin": str(claude)},
         {"adapter": "codex", "name": "quokkalot", "model": "gpt-basalt", "bin": str(codex)}],
        judge={"adapter": "gemini", "name": "arbitrix", "model": "gemini-onyx",
               "bin": str(gemini)}, rounds=1)
    r = invoke("q", "--config", str(cfg), "-q", cwd=home)
    debate = next(p for p in (home / ".debate").iterdir() if p.is_dir())
    raw = debate / "raw"
    judged = list(raw.glob("*-respondeo-1*.prompt.md"))
    assert judged, r.stderr
    forbidden = ["zephyrine", "quokkalot", "arbitrix", "opus-quartz", "gpt-basalt",
                 "gemini-onyx", "claude", "codex", "gemini", "anthropic", "openai", "google"]
    every = sorted(raw.glob("*.prompt.md"))
    assert len(every) >= 5          # 2 proposals, 2 reactions, the judge
    for prompt in every:
        text = prompt.read_text().lower()
        assert [w for w in forbidden if w in text] == [], prompt.name
    assert "Participant A" in judged[0].read_text()
    # and the human can tell who was who
    assert "zephyrine (Participant A)" in (debate / "debate.md").read_text()
    shown = json.loads((debate / "debate.json").read_text())["participants"]
    assert [(p["name"], p["label"]) for p in shown] == [("zephyrine", "Participant A"),
                                                         ("quokkalot", "Participant B")]


@pytest.mark.parametrize("protocol", ["disputatio", "committee", "wind-wall-door"])
def test_no_protocol_names_a_participant_to_an_agent(home, protocol):
    people = [{"adapter": "simulated", "name": n, "model": m} for n, m in
              (("zephyrine", "advocate"), ("quokkalot", "skeptic"), ("marmaduke", "pragmatist"))]
    judge = {"adapter": "simulated", "name": "arbitrix", "model": "judge"}
    cfg = write_config(home / "d.yaml", people, judge=judge, rounds=1)
    r = invoke("q", "--config", str(cfg), "--protocol", protocol, "-q", cwd=home)
    assert r.returncode == 0, r.stderr
    debate = next(p for p in (home / ".debate").iterdir() if p.is_dir())
    every = sorted((debate / "raw").glob("*.prompt.md"))
    assert len(every) >= 4
    for prompt in every:
        found = re.findall(r"zephyrine|quokkalot|marmaduke|arbitrix", prompt.read_text())
        assert found == [], prompt.name


def test_the_ledger_records_recusal_and_the_user_is_warned_before_anything_runs(home, tmp_path):
    claude = fake_cli(tmp_path / "claude", "2.1.197 (Claude Code)", "claude/success.stdout")
    codex = fake_cli(tmp_path / "codex", "codex-cli 0.171.0", "codex/success.stdout")
    cfg = write_config(
        home / "d.yaml",
        [{"adapter": "claude", "name": "cl", "model": "m1", "bin": str(claude)},
         {"adapter": "codex", "name": "co", "bin": str(codex)}],
        judge={"adapter": "claude", "name": "arbiter", "model": "m2", "bin": str(claude)},
        rounds=0)
    r = invoke("q", "--config", str(cfg), "-q", cwd=home)
    assert "the judge shares a vendor (Anthropic) with cl and the lineup has no judge " \
           "without such a conflict, so it rules on their arguments anyway (recusal: vendor)" \
           in r.stderr
    debate = next(p for p in (home / ".debate").iterdir() if p.is_dir())
    started = ledger.load(debate / "events.jsonl")[0].data
    assert started["recusal"] == {"mode": "vendor", "conflicts": {"arbiter": ["cl"]},
                                  "recused": []}
    s = proto.state(ledger.load(debate / "events.jsonl"))
    assert labels.conflicts(s.started) == {"arbiter": ["cl"]} and labels.recused(s.started) == []
