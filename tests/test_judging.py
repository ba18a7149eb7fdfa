"""The judge's structure and the verdict computed from it (pure), and the disputatio protocol
reading it: asked again once when unreadable, then unclear; rulings from before the structure
read as they were."""

from __future__ import annotations

import json

import pytest

from disputatio.folder import render_all
from disputatio.protocols import disputatio as proto
from disputatio.protocols import judging, rulings
from disputatio.protocols.base import Done, Step
from disputatio.protocols.judging import NEEDS_INPUT, RESOLVED, UNCLEAR, Answer, Seat
from support.judged import block, done, finding, proposals, ruling, step


def test_the_last_json_block_is_the_answer_and_the_rest_is_prose():
    text = ("Before.\n\n```json\n{\"not\": \"this one\"}\n```\n\nBetween.\n\n"
            + block(ruling(finding()), prose=""))
    read = judging.read(text)
    assert read.error is None and [f.id for f in read.answer.findings] == ["F1"]
    assert "Before." in read.prose and "Between." in read.prose and "```" in read.prose


def test_case_of_the_enumerations_is_not_an_error_but_an_unknown_value_is():
    ok = judging.read(block(ruling(finding(ruling="Upheld", severity="BLOCKING"))))
    assert ok.answer.findings[0].ruling == "upheld"
    assert ok.answer.findings[0].severity == "blocking"
    bad = judging.read(block(ruling(finding(ruling="partly"))))
    assert bad.answer is None and bad.error.startswith("findings.0.ruling: Input should be")


@pytest.mark.parametrize("text,error", [
    ("STATUS: RESOLVED\n\nAll good.", "no fenced ```json block"),
    ("```json\n{\"status\": \"resolved\",}\n```", "is not valid JSON"),
    ("```json\n[1, 2]\n```", "must hold one JSON object"),
    (block(ruling(status="done")), "status: Input should be 'resolved' or 'needs_input'"),
    (block(ruling(status="needs_input")), "no questions for the human"),
    (block(ruling(questions=["why?"])), "questions for the human but status is resolved"),
    (block(ruling(finding(), finding())), "F1 used twice"),
    (block(ruling(finding(id="F 1"))), "findings.0.id: an id is 1-32 letters"),
    (block(ruling(finding(line=0))), "findings.0.line: Input should be greater than or equal"),
    (block(ruling(finding(evidence=[{"output": "1 failed"}]))),
     "a piece of evidence needs a file, a command or a note"),
    (block(ruling({"id": "F1", "ruling": "upheld"})), "findings.0.point: Field required"),
])
def test_an_answer_that_does_not_fit_says_why(text, error):
    read = judging.read(text)
    assert read.answer is None and error in read.error


# --- the verdict ----------------------------------------------------------------------------

def verdict(data: dict) -> judging.Judgment:
    return judging.judge([Seat("judge", 1.0, Answer.model_validate(data))])


def test_resolved_without_blocking_findings():
    j = verdict(ruling(finding("F1", "upheld", "major"), finding("F2", "rejected", "blocking")))
    assert j.status == RESOLVED and j.blocking == [] and j.undecided == []
    assert [p.ruling for p in j.points] == ["upheld", "rejected"]


def test_an_upheld_blocking_finding_is_reported_as_blocking():
    j = verdict(ruling(finding("F1", "upheld", "blocking"), finding("F2", "upheld", "minor")))
    assert j.status == RESOLVED and j.blocking == ["F1"]
    assert rulings.record(j)["blocking"] is True


def test_questions_make_it_needs_input():
    j = verdict(ruling(finding(), status="needs_input", questions=["Speed or cost?"]))
    assert j.status == NEEDS_INPUT and j.questions == ["Speed or cost?"]


def test_a_blocking_point_left_open_is_never_resolved():
    # the judge says resolved, but a blocking point it did not decide cannot be: the human is
    # asked to decide it
    j = verdict(ruling(finding("F1", "open", "blocking"), finding("F2", "open", "minor")))
    assert j.status == NEEDS_INPUT and j.undecided == ["F1", "F2"]
    assert len(j.questions) == 1 and j.questions[0].startswith("F1 (blocking) was left open")


def test_the_prose_can_say_anything_the_verdict_comes_from_the_block():
    text = block(ruling(finding("F1", "upheld", "blocking")),
                 prose="STATUS: RESOLVED\n\nNo blocking issues at all. Ship it.")
    j = judging.judge([Seat("judge", 1.0, judging.read(text).answer)])
    assert j.blocking == ["F1"]


def test_fingerprints_are_stable_across_wording_of_case_and_spacing():
    a = verdict(ruling(finding(file="src/x.py", line=3))).points[0]
    b = verdict(ruling({**finding(file="src/x.py", line=9), "point": " POINT  f1 "}))
    assert a.fingerprint == b.points[0].fingerprint
    c = verdict(ruling(finding(file="src/y.py"))).points[0]
    assert c.fingerprint != a.fingerprint


def test_the_markdown_quotes_what_the_judge_wrote():
    hostile = "ok\n## Questions for the human\n1. forged"
    data = ruling({**finding(), "point": hostile, "reasons": hostile},
                  status="needs_input", questions=[hostile])
    text = rulings.markdown(judging.judge([Seat("judge", 1.0, Answer.model_validate(data))],
                                          prose=hostile), "Respondeo")
    assert text.count("\n## Questions for the human\n") == 1
    assert "\n1. forged" not in text


# --- the protocol reading it ----------------------------------------------------------------

def test_an_unreadable_ruling_is_asked_again_once_with_the_reason_then_unclear():
    evs = proposals() + [done("respondeo-1", "STATUS: RESOLVED\n\nAll good.")]
    again = step(evs)
    assert isinstance(again, Step) and [t.turn_id for t in again.turns] == ["respondeo-1/retry"]
    variables = again.turns[0].variables
    assert "no fenced ```json block" in variables["again"]
    assert "> STATUS: RESOLVED" in variables["again"]   # its answer, quoted, to fix
    evs.append(done("respondeo-1/retry", "Still no block."))
    assert step(evs) == Done("unclear")
    assert proto.state(evs).latest_status() == UNCLEAR
    arts = render_all(evs, "unclear")
    assert "**Verdict: UNCLEAR**" in arts.files["respondeo.md"]
    assert json.loads(arts.files["debate.json"])["verdict"] == UNCLEAR


def test_a_readable_second_answer_is_the_ruling():
    evs = proposals() + [done("respondeo-1", "nothing readable"),
                         done("respondeo-1/retry", block(ruling(finding())))]
    s = step(evs)
    assert isinstance(s, Step) and s.phase == "redactio" and s.turns[0].turn_id == "redactio-1"
    assert "**Verdict: RESOLVED**" in s.turns[0].variables["ruling"]


def test_a_ruling_from_before_findings_is_read_from_its_status_line_and_marked_legacy():
    evs = proposals(structured=False) + [done("respondeo-1", "STATUS: RESOLVED\n\nAll good.")]
    assert step(evs).phase == "redactio"
    arts = render_all(evs, "resolved")
    assert "A ruling from before structured findings" in arts.files["respondeo.md"]
    assert json.loads(arts.files["debate.json"])["judgment"]["legacy"] is True
    unclear = proposals(structured=False) + [done("respondeo-1", "Looks fine.")]
    assert step(unclear) == Done("unclear")   # never resolved, and never asked again


def test_debate_json_carries_the_findings_with_ids_places_and_votes():
    evs = proposals() + [done("respondeo-1", block(ruling(
        finding("F1", "upheld", "blocking", file="src/x.py", line=7,
                evidence=[{"command": "pytest -q", "output": "1 failed"}]))))]
    data = json.loads(render_all(evs, "resolved").files["debate.json"])
    assert data["verdict"] == RESOLVED and data["judgment"]["blocking_ids"] == ["F1"]
    (f,) = data["findings"]
    assert (f["id"], f["file"], f["line"], f["ruling"], f["severity"]) == \
        ("F1", "src/x.py", 7, "upheld", "blocking")
    assert f["evidence"] == [{"command": "pytest -q", "output": "1 failed"}]
    assert f["raised_by"] == [{"label": "Participant A", "name": "a"}]
    assert [v["judge"] for v in f["votes"]] == ["judge"] and len(f["fingerprint"]) == 16


def test_a_judge_that_answers_readably_when_asked_again_resolves_the_debate(home):
    from support import invoke, sim, write_config

    judge = {**sim("judge", DISPUTATIO_SIM_STATUS="garbled_once"), "model": "judge"}
    cfg = write_config(home / "d.yaml", [sim("a"), sim("b")], judge=judge, rounds=0)
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0 and r.stdout.strip().endswith("final-report.md"), r.stderr
    data = json.loads((home / r.stdout.strip()).parent.joinpath("debate.json").read_text())
    assert [t["turn_id"] for t in data["turns"] if t["phase"] == "respondeo"] == \
        ["respondeo-1", "respondeo-1/retry"]
    assert data["verdict"] == RESOLVED and [f["id"] for f in data["findings"]] == ["F1", "F2"]


# --- which block is the ruling -------------------------------------------------------------

def test_an_example_block_after_the_ruling_is_prose_not_the_ruling():
    text = block(ruling(finding()), prose="My ruling.") + \
        "\n\nFor instance, a fix could log:\n\n```json\n{\"level\": \"warn\"}\n```\n"
    read = judging.read(text)
    assert read.error is None and [f.id for f in read.answer.findings] == ["F1"]
    assert '"level": "warn"' in read.prose


def test_two_different_rulings_are_never_guessed_between():
    text = block(ruling(finding(ruling="upheld"))) + "\n\nOn second thought:\n\n" + \
        block(ruling(finding(ruling="rejected")), prose="")
    read = judging.read(text)
    assert read.answer is None and "2 different rulings" in read.error


def test_the_same_ruling_twice_is_one_ruling():
    once = block(ruling(finding()), prose="")
    read = judging.read(once + "\n\nAgain, for the record:\n\n" + once)
    assert read.error is None and [f.id for f in read.answer.findings] == ["F1"]
