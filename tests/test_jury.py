"""A jury: the judge's findings fix the points, every judge rules on them on its own, and each
point is decided by a weighted count — ties and splits reported, dissent kept with its
reasons, a juror that fails recorded. Aggregation is pure; the flow runs through the protocol
and, at the end, as a user runs it."""

from __future__ import annotations

import json

import pytest

from disputatio import config, ledger
from disputatio.protocols import disputatio as proto
from disputatio.protocols import judging
from disputatio.protocols.base import Step
from disputatio.protocols.judging import NEEDS_INPUT, RESOLVED, Answer, Ballot, Seat
from support import invoke, sim, write_config
from support.judged import Ev, block, done, finding, proposals, ruling, step


def vote(id="F1", ruling="upheld", severity=None, reasons="") -> dict:
    return {"id": id, "ruling": ruling, "severity": severity, "reasons": reasons or f"on {id}"}


def ballot(*votes, status="resolved", questions=()) -> Ballot:
    return Ballot.model_validate({"status": status, "findings": list(votes),
                                  "questions": list(questions)})


def clerk(*findings, **more) -> Seat:
    return Seat("judge", 1.0, Answer.model_validate(ruling(*findings, **more)))


def point(j: judging.Judgment, id: str = "F1") -> judging.Point:
    return next(p for p in j.points if p.finding.id == id)


# --- aggregation (pure) ---------------------------------------------------------------------

def test_a_majority_decides_with_its_margin_and_the_dissent_keeps_its_reasons():
    j = judging.judge([clerk(finding("F1", "upheld", "major")),
                       Seat("b", 1.0, ballot(vote("F1", "upheld"))),
                       Seat("c", 1.0, ballot(vote("F1", "rejected", reasons="not shown")))])
    p = point(j)
    assert (p.ruling, p.margin) == ("upheld", 1.0)
    assert [(c.juror, c.ruling, c.reasons) for c in p.dissent] == [("c", "rejected", "not shown")]
    assert j.status == RESOLVED and j.ruled == ["judge", "b", "c"]


def test_unanimity_has_no_dissent():
    j = judging.judge([clerk(finding("F1", "rejected")),
                       Seat("b", 1.0, ballot(vote("F1", "rejected")))])
    assert (point(j).ruling, point(j).margin, point(j).dissent) == ("rejected", 2.0, [])


def test_weights_count_so_one_heavy_juror_outweighs_two():
    j = judging.judge([clerk(finding("F1", "upheld")),
                       Seat("b", 1.0, ballot(vote("F1", "upheld"))),
                       Seat("c", 3.0, ballot(vote("F1", "rejected")))])
    p = point(j)
    assert (p.ruling, p.margin) == ("rejected", 1.0)
    assert sorted(c.juror for c in p.dissent) == ["b", "judge"]


def test_a_tie_is_reported_as_a_tie_not_resolved_by_fiat():
    j = judging.judge([clerk(finding("F1", "upheld", "minor")),
                       Seat("b", 1.0, ballot(vote("F1", "rejected")))])
    p = point(j)
    assert (p.ruling, p.margin, p.decided, p.dissent) == ("tied", 0.0, False, [])
    assert j.undecided == ["F1"] and j.status == RESOLVED   # a minor point: the human not asked


def test_a_split_without_a_majority_is_reported_as_a_split():
    j = judging.judge([clerk(finding("F1", "upheld")),
                       Seat("b", 1.0, ballot(vote("F1", "rejected"))),
                       Seat("c", 1.5, ballot(vote("F1", "open")))])
    p = point(j)
    assert (p.ruling, p.margin) == ("split", 0.5)   # open leads, without a majority


def test_an_undecided_blocking_point_asks_the_human_to_decide_it():
    j = judging.judge([clerk(finding("F1", "upheld", "blocking")),
                       Seat("b", 1.0, ballot(vote("F1", "rejected", "blocking")))])
    assert j.status == NEEDS_INPUT and j.blocking == []
    assert j.questions == ["F1 (blocking) was tied (upheld 1, rejected 1): point F1 — how "
                           "should it be decided?"]


def test_severity_is_the_weighted_majority_and_a_tie_reads_as_the_graver():
    j = judging.judge([clerk(finding("F1", "upheld", "blocking")),
                       Seat("b", 1.0, ballot(vote("F1", "upheld", "minor")))])
    assert point(j).severity == "blocking" and j.blocking == ["F1"]
    j = judging.judge([clerk(finding("F1", "upheld", "blocking")),
                       Seat("b", 1.0, ballot(vote("F1", "upheld", "minor"))),
                       Seat("c", 1.0, ballot(vote("F1", "upheld", "minor")))])
    assert point(j).severity == "minor" and j.blocking == []


def test_failed_and_silent_jurors_are_recorded_and_only_the_rulers_count():
    j = judging.judge([clerk(finding("F1", "upheld"), finding("F2", "rejected")),
                       Seat("b", 1.0, None, "failed (timeout)"),
                       Seat("c", 1.0, ballot(vote("F1", "rejected"), vote("F9", "upheld")))])
    assert j.ruled == ["judge", "c"] and len(j.seats) == 3
    assert point(j, "F2").abstained == ["c"] and point(j, "F2").ruling == "rejected"
    assert point(j, "F1").ruling == "tied"
    assert [p.finding.id for p in j.points] == ["F1", "F2"]   # a point nobody fixed: not counted


def test_the_status_is_a_weighted_vote_and_a_tie_asks_the_human():
    asks = dict(status="needs_input", questions=["Which deadline?"])
    tie = judging.judge([clerk(finding()), Seat("b", 1.0, ballot(vote(), **asks))])
    assert tie.status == NEEDS_INPUT and tie.questions == ["Which deadline?"]
    outvoted = judging.judge([clerk(finding()), Seat("b", 1.0, ballot(vote(), **asks)),
                              Seat("c", 1.0, ballot(vote()))])
    assert outvoted.status == RESOLVED and outvoted.questions == []


# --- through the protocol -------------------------------------------------------------------

JURY = [{"name": "j2", "seat": "juror-1", "weight": 1}, {"name": "j3", "seat": "juror-2",
                                                         "weight": 2}]


def test_jurors_rule_in_parallel_on_the_points_the_judge_fixed_and_not_on_its_rulings():
    evs = proposals(jury=JURY) + [done("respondeo-1", block(ruling(
        finding("F1", "upheld", reasons="SECRET-REASONS"))))]
    s = step(evs)
    assert isinstance(s, Step) and s.phase == "jury"
    assert [(t.turn_id, t.participant, t.role, t.template) for t in s.turns] == [
        ("respondeo-1/j2", "j2", "juror", "jury"), ("respondeo-1/j3", "j3", "juror", "jury")]
    points = s.turns[0].variables["points"]
    assert '"id": "F1"' in points and "point F1" in points
    assert "SECRET-REASONS" not in points and "upheld" not in points


def test_the_jury_s_verdict_counts_who_ruled():
    evs = proposals(jury=JURY) + [
        done("respondeo-1", block(ruling(finding("F1", "upheld", "blocking")))),
        done("respondeo-1/j2", block(ballot(vote("F1", "upheld")).model_dump()),
             role="j2", seat="juror"),
        done("respondeo-1/j3", "", role="j3", seat="juror", ok=False)]
    s = proto.state(evs)
    assert proto.next_step(s).phase == "redactio"
    from disputatio.folder import render_all
    data = json.loads(render_all(evs, "resolved").files["debate.json"])
    assert data["judgment"]["judges"]["ruled"] == 2 and data["judgment"]["judges"]["seated"] == 3
    assert data["judgment"]["judges"]["seats"][2] == {"name": "j3", "weight": 2.0,
                                                      "ruled": False,
                                                      "failure": "failed (timeout)"}
    assert data["judgment"]["blocking_ids"] == ["F1"]


def test_an_unreadable_juror_is_asked_again_once_then_recorded_unreadable():
    evs = proposals(jury=JURY[:1]) + [
        done("respondeo-1", block(ruling(finding()))),
        done("respondeo-1/j2", "no block", role="j2", seat="juror")]
    again = step(evs)
    assert [t.turn_id for t in again.turns] == ["respondeo-1/j2/retry"]
    evs.append(done("respondeo-1/j2/retry", "still none", role="j2", seat="juror"))
    w = proto.respondeo.walk(proto.state(evs))
    assert w.last.seats[1].failure == "unreadable" and w.last.ruled == ["judge"]


def test_seats_and_places_give_every_juror_a_budget_and_no_checkout():
    s = proto.state(proposals(jury=JURY, seats={}))
    assert [(x.name, x.key) for x in proto.seats(s)] == \
        [("judge", "judge"), ("j2", "juror-1"), ("j3", "juror-2")]
    places = proto.places(s, None)
    assert places.names[-3:] == ("judge", "j2", "j3")
    assert {"j2", "j3"} <= places.no_repo and "judge" not in places.no_repo   # it drafts too


# --- --continue re-engages the debaters -----------------------------------------------------

def _asked() -> list[Ev]:
    return proposals() + [done("respondeo-1", block(ruling(
        finding(), status="needs_input", questions=["GPUs?"]))),
        Ev("answers_given", {"answers": "GPUs are available"})]


def test_answers_that_open_new_ground_send_the_debaters_back_before_the_judge_rules_again():
    evs = _asked()
    s = step(evs)
    assert s.turns[0].turn_id == "respondeo-2" and s.turns[0].template == "continuation"
    assert s.turns[0].variables["new_ground"].startswith("true when")
    evs.append(done("respondeo-2", block(ruling(finding(), new_ground=True)), rnd=2))
    back = step(evs)
    assert back.phase == "reactions on the answers"
    assert [(t.turn_id, t.template) for t in back.turns] == [("reaction-1/a", "reengage"),
                                                             ("reaction-1/b", "reengage")]
    v = back.turns[0].variables
    assert "GPUs?" in v["questions"] and "GPUs are available" in v["answers"]
    assert v["label"] == "Participant A" and "a" not in v["label"].split()
    evs += [done("reaction-1/a", "A on GPUs", role="a", phase="reaction"),
            done("reaction-1/b", "B on GPUs", role="b", phase="reaction")]
    final = step(evs)
    assert final.turns[0].turn_id == "respondeo-3"
    assert final.turns[0].variables["new_ground"].startswith("false")
    assert "A on GPUs" in final.turns[0].variables["transcript"]
    # asked once per answers: new ground claimed again is not acted on
    evs.append(done("respondeo-3", block(ruling(finding(), new_ground=True)), rnd=3))
    assert step(evs).turns[0].turn_id == "redactio-3"


def test_answers_that_open_no_new_ground_go_straight_to_the_report():
    evs = _asked() + [done("respondeo-2", block(ruling(finding())), rnd=2)]
    assert step(evs).turns[0].turn_id == "redactio-2"


def test_a_continue_keeps_the_debaters_checkouts_for_a_round_on_the_answers():
    from disputatio.events import AnswersGiven, FinalizeRequested
    s = proto.state(_asked())
    assert proto.places(s, AnswersGiven(answers="x")).names[:2] == ("a", "b")
    assert proto.places(s, FinalizeRequested()).names == ("judge",)
    assert proto.released(s, Step("respondeo", ())) == []
    assert proto.released(s, Step("redactio", ())) == ["a", "b"]


# --- the lineup -----------------------------------------------------------------------------

BASE = "participants: [{adapter: simulated, name: a}, {adapter: simulated, name: b}]\n"


def test_jury_n_seats_the_judge_n_times_and_a_list_seats_its_entries_with_weights():
    cfg = config.parse_text(BASE + "judge: {adapter: simulated}\njury: 3\n", "x")
    assert [(n, p.adapter, w) for n, p, w in cfg.jurors()] == \
        [("judge-2", "simulated", 1.0), ("judge-3", "simulated", 1.0)]
    cfg = config.parse_text(BASE + "judge: {adapter: simulated}\njury:\n"
                            "  - {adapter: simulated, name: j2, weight: 2}\n", "x")
    assert config.jury_record(cfg) == [{"name": "j2", "seat": "juror-1", "weight": 2}]
    assert "weight" not in config.jury_seats(cfg)["juror-1"].model_dump()


@pytest.mark.parametrize("tail,error", [
    ("jury: 2\n", "x:2: jury: a jury rules with the judge, and there is no judge"),
    ("judge: {adapter: simulated}\njury: 1\n", "x:3: jury: Input should be greater than"),
    ("judge: {adapter: simulated}\njury: true\n", "x:3: jury: Input should be a valid integer"),
    ("judge: {adapter: simulated}\njury: [{adapter: simulated, name: a}]\n",
     "x:3: jury.0: the juror's name 'a' is already taken"),
    ("judge: {adapter: simulated}\njury: [{adapter: simulated, wieght: 2}]\n",
     "x:3: unknown key 'jury.0.wieght' (did you mean 'weight'?)"),
    ("judge: {adapter: simulated}\njury: [{adapter: simulated, weight: 0}]\n",
     "x:3: jury.0.weight: Input should be greater than 0"),
])
def test_a_wrong_jury_is_one_line_with_its_place(tail, error):
    with pytest.raises(config.ConfigError) as exc:
        config.parse_text(BASE + tail, "x")
    assert str(exc.value).startswith(error)


# --- as a user runs it ----------------------------------------------------------------------

def test_a_jury_debate_end_to_end(home):
    jury = [{**sim("j2", DISPUTATIO_SIM_RULING="rejected"), "weight": 2},
            sim("j3", DISPUTATIO_SIM_FAIL=1)]
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b")], rounds=0, jury=jury)
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    folder = (home / r.stdout.strip()).parent
    data = json.loads((folder / "debate.json").read_text())
    assert data["judgment"]["judges"]["ruled"] == 2
    assert [f["ruling"] for f in data["findings"]] == ["rejected", "rejected"]
    assert data["findings"][0]["dissent"] == ["judge"]
    text = (folder / "respondeo.md").read_text()
    assert "**Jury:** 2 of 3 judges ruled (judge, j2); j3 failed (api_error)" in text
    assert "Dissent — judge (upheld):" in text
    lineup = json.loads((folder / "lineup.json").read_text())
    assert lineup["seats"]["juror-1"]["name"] == "j2" and "weight" not in lineup["seats"]["juror-1"]
    started = ledger.load(folder / "events.jsonl")[0].data
    assert started["jury"] == [{"name": "j2", "seat": "juror-1", "weight": 2},
                               {"name": "j3", "seat": "juror-2", "weight": 1}]
    prompt = next((folder / "raw").glob("*-respondeo-1-j2.prompt.md")).read_text()
    assert "## The points to rule on" in prompt and "j3" not in prompt


def test_continue_with_new_ground_runs_a_round_on_the_answers(home):
    judge = {**sim("judge", DISPUTATIO_SIM_STATUS="needs_input", DISPUTATIO_SIM_NEW_GROUND=1),
             "model": "judge"}
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b")], judge=judge, rounds=1)
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0 and r.stdout.strip().endswith("respondeo.md"), r.stderr
    r = invoke("--continue", "GPUs are available", cwd=home)
    assert r.returncode == 0, r.stderr
    folder = (home / r.stdout.strip()).parent
    assert r.stdout.strip().endswith("final-report.md")
    assert "**Verdict (provisional): RESOLVED**" in (folder / "respondeo-2.md").read_text()
    assert (folder / "respondeo-3.md").is_file()
    prompt = next((folder / "raw").glob("*-reaction-2-a.prompt.md")).read_text()
    assert "GPUs are available" in prompt and "on the human's answers" in prompt
    md = (folder / "debate.md").read_text()
    order = [md.index(h) for h in ("## The human's answers", "## Respondeo 2 —",
                                   "## Reaction, round 2 (on the human's answers) — a",
                                   "## Respondeo 3 —", "## Redactio")]
    assert order == sorted(order)


def test_a_recused_judge_does_not_sit_and_the_first_juror_fixes_the_points():
    evs = proposals(jury=JURY, recusal={"mode": "vendor", "conflicts": {"judge": ["a"]},
                                        "recused": ["judge"]})
    s = step(evs)
    assert [(t.turn_id, t.participant, t.role, t.template) for t in s.turns] == \
        [("respondeo-1", "j2", "judge", "respondeo")]
    evs.append(done("respondeo-1", block(ruling(finding())), role="j2"))
    assert [t.turn_id for t in step(evs).turns] == ["respondeo-1/j3"]


def test_a_provisional_ruling_takes_no_answers_and_no_finalize_until_the_judge_rules_again():
    evs = _asked() + [done("respondeo-2", block(ruling(finding(), new_ground=True)), rnd=2)]
    s = proto.state(evs)
    assert s.latest_status() is None   # the round on the answers is still to come
    with pytest.raises(proto.Refused, match="has not ruled yet"):
        proto.accept(s, "continue", "more")


def test_the_report_s_prompt_names_neither_debaters_nor_judges():
    jury = [{"name": "juror-codex", "seat": "juror-1", "weight": 1}]
    evs = proposals(jury=jury) + [
        done("respondeo-1", block(ruling(finding()))),
        done("respondeo-1/juror-codex", block(ballot(vote("F1", "rejected")).model_dump()),
             role="juror-codex", seat="juror")]
    ruling_text = step(evs).turns[0].variables["ruling"]
    assert "Participant A" in ruling_text and "Judge 2" in ruling_text
    assert "codex" not in ruling_text and "(a)" not in ruling_text


def test_resume_after_a_failed_report_does_not_rerun_a_failed_juror():
    evs = proposals(jury=JURY[:1]) + [
        done("respondeo-1", block(ruling(finding()))),
        done("respondeo-1/j2", "", role="j2", seat="juror", ok=False),
        done("redactio-1", "", role="judge", seat="synthesizer", phase="redactio", ok=False)]
    s = proto.state(evs)
    stop = proto.next_step(s)
    assert stop.status == "failed" and proto.retry(s, stop) == ["redactio-1"]
