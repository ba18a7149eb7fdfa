"""Recusal says what will really happen: a judge taken off is never said to rule, only the
judges a protocol seats are weighed (the committee's judge rules alone, Wind/Wall/Door's takes
no part), and a recused judge is given no directory to rule in."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from disputatio import config, ledger
from disputatio.protocols import disputatio as proto
from support import FAKES, invoke, own_python, write_config


def claude_vs_codex(judge: dict, jury: list[dict] | None = None) -> config.DebateConfig:
    return config.DebateConfig(
        participants=[{"adapter": "claude", "name": "cl"}, {"adapter": "codex", "name": "co"}],
        judge=judge, jury=jury)


FREE_JUROR = [{"adapter": "command", "name": "free", "argv": ["true"]}]


def test_a_judge_recused_is_not_said_to_rule_on_its_own_arguments():
    same = {"adapter": "claude", "name": "arbiter"}     # the very CLI and model of cl
    warned = config.lineup_warnings(claude_vs_codex(same, FREE_JUROR))
    assert warned == ["judge arbiter is recused: it shares a vendor (Anthropic) with cl "
                      "(recusal: vendor); the other judges rule"]
    # without another judge it does rule, and is warned of once
    assert config.lineup_warnings(claude_vs_codex(same)) == [
        "the judge is the same CLI and model as debater cl; it will rule on its own arguments"]
    # recused by its model: no word of a shared vendor either
    cfg = claude_vs_codex(same, FREE_JUROR).model_copy(update={"recusal": "model"})
    assert config.lineup_warnings(cfg) == [
        "judge arbiter is recused: it shares its model with cl (recusal: model); the other "
        "judges rule"]


def test_only_the_judges_the_protocol_seats_are_weighed():
    cfg = claude_vs_codex({"adapter": "claude", "name": "arbiter", "model": "m"}, FREE_JUROR)
    assert config.recusal_record(cfg, "jury")["recused"] == ["arbiter"]
    # a judge ruling alone has no other judge to yield to
    alone = config.recusal_record(cfg, "judge")
    assert alone == {"mode": "vendor", "conflicts": {"arbiter": ["cl"]}, "recused": []}
    assert config.lineup_warnings(cfg, "judge") == [
        "the judge shares a vendor (Anthropic) with cl and the lineup has no judge without "
        "such a conflict, so it rules on their arguments anyway (recusal: vendor)"]
    # a judge that takes no part is neither recused nor warned of
    same = claude_vs_codex({"adapter": "claude", "name": "arbiter"}, FREE_JUROR)
    assert config.recusal_record(same, None) == {"mode": "vendor", "conflicts": {},
                                                 "recused": []}
    assert config.lineup_warnings(same, None) == []


def test_a_committee_records_and_warns_of_its_lone_judge_as_ruling(home, tmp_path):
    priced = own_python(FAKES / "priced.py", tmp_path)   # a claude that answers and bills
    cfg = write_config(home / "d.yaml",
                       [{"adapter": "claude", "name": "cl", "bin": str(priced)},
                        {"adapter": "simulated", "name": "sim", "model": "skeptic"}],
                       judge={"adapter": "claude", "name": "arbiter", "model": "m",
                              "bin": str(priced)},
                       jury=[{"adapter": "simulated", "name": "free", "model": "judge"}],
                       rounds=1)
    r = invoke("q", "--config", str(cfg), "--protocol", "committee", "-q", cwd=home)
    assert "is recused" not in r.stderr
    assert "so it rules on their arguments anyway" in r.stderr
    debate = next(p for p in (home / ".debate").iterdir() if p.is_dir())
    started = ledger.load(debate / "events.jsonl")[0].data
    assert started["recusal"]["recused"] == []


@dataclass
class Ev:
    type: str
    data: dict


def test_a_recused_judge_gets_no_directory():
    start = Ev("debate_started", {
        "quaestio": "Q?", "rounds": 0, "participants": ["cl", "co"], "judge": "arbiter",
        "synthesizer": "writer", "jury": [{"name": "free", "seat": "juror-1", "weight": 1}],
        "recusal": {"mode": "vendor", "conflicts": {"arbiter": ["cl"]},
                    "recused": ["arbiter"]}})
    places = proto.places(proto.state([start]), None)
    assert places.names == ("cl", "co", "writer", "free")
    assert "free" in places.no_repo     # a juror rules without the repository
    # not recused, it has its directory
    start.data["recusal"] = {"mode": "off", "conflicts": {}, "recused": []}
    assert "arbiter" in proto.places(proto.state([start]), None).names


def test_off_is_taken_as_written_though_yaml_reads_it_as_false():
    text = ("recusal: off\nfence: off\nparticipants:\n  - adapter: claude\n"
            "  - adapter: codex\n")
    cfg = config.parse_text(text, "x.yaml")
    assert (cfg.recusal, cfg.fence) == ("off", "off")
    # a boolean that cannot mean off stays an error, on its line
    with pytest.raises(config.ConfigError, match=r"^x.yaml:2: fence: "):
        config.parse_text(text.replace("fence: off", "fence: true"), "x.yaml")


def test_the_progress_header_says_who_is_recused():
    start = Ev("debate_started", {
        "quaestio": "Q?", "rounds": 0, "participants": ["cl", "co"], "judge": "arbiter",
        "synthesizer": "arbiter", "jury": [{"name": "free", "seat": "juror-1", "weight": 1}],
        "recusal": {"mode": "vendor", "conflicts": {"arbiter": ["cl"]},
                    "recused": ["arbiter"]}})
    assert proto.lineup_line(proto.state([start])) == \
        "cl, co · judge arbiter (recused) · jury free"


def test_a_ruling_says_who_was_recused(home, tmp_path):
    priced = own_python(FAKES / "priced.py", tmp_path)
    cfg = write_config(home / "d.yaml",
                       [{"adapter": "claude", "name": "cl", "bin": str(priced)},
                        {"adapter": "simulated", "name": "sim", "model": "skeptic"}],
                       judge={"adapter": "claude", "name": "arbiter", "bin": str(priced)},
                       jury=[{"adapter": "simulated", "name": "free", "model": "judge"}],
                       rounds=0)
    r = invoke("q", "--config", str(cfg), "-q", cwd=home)
    assert r.returncode == 0, r.stderr
    assert "it will rule on its own arguments" not in r.stderr
    debate = next(p for p in (home / ".debate").iterdir() if p.is_dir())
    ruling = (debate / "respondeo.md").read_text()
    assert ruling.startswith("# Respondeo\n\n_Judge arbiter was recused: it shares a vendor with "
                             "cl (recusal: vendor)._\n\n**Verdict: RESOLVED**")
    shown = json.loads((debate / "debate.json").read_text())["judgment"]
    assert shown["recused"] == ["arbiter"]
    assert [seat["name"] for seat in shown["judges"]["seats"]] == ["free"]
    # the juror fixed the points; the recused judge only drafted the report, as synthesizer
    turns = [(e.data["role"], e.data["phase"]) for e in ledger.load(debate / "events.jsonl")
             if e.type == "turn_started" and e.data["phase"] in ("respondeo", "redactio")]
    assert turns == [("free", "respondeo"), ("arbiter", "redactio")]
