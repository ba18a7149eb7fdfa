from dataclasses import dataclass
from pathlib import Path

from disputatio.folder import render_all
from disputatio.render import summary


@dataclass
class Ev:
    type: str
    data: dict
    ts: str = "2026-11-29T10:00:00.000Z"


def started():
    return Ev("debate_started", {"quaestio": "Q?", "rounds": 1, "participants": ["a", "codex"],
                                 "judge": "judge", "synthesizer": "judge",
                                 "lineup": {"a": {"adapter": "claude"},
                                            "codex": {"adapter": "codex"}}})


def turn(turn_id, role, phase, rnd=0, ok=True, text="t", cost=None, tokens=None,
         failure=None, message="", duration=1.0, evidence=None, session=None):
    base = {"turn_id": turn_id, "role": role, "seat": "participant", "phase": phase,
            "round": rnd, "adapter": "x"}
    return [Ev("turn_started", base),
            Ev("turn_completed", {**base, "ok": ok, "text": text, "cost_usd": cost,
                                  "tokens": tokens or {}, "failure": failure,
                                  "message": message, "duration_s": duration,
                                  "evidence": evidence or {}, "session_id": session})]


def test_unknown_cost_stays_unknown():
    views = summary.turns([started(), *turn("proposal/a", "a", "proposal")])
    t = summary.totals(views)
    assert t.cost_usd is None and summary.fmt_cost(t) == "cost unknown"
    assert summary.fmt_tokens(t.tokens) == "tokens unknown"


def test_partial_cost_is_marked():
    evs = [started(), *turn("proposal/a", "a", "proposal", cost=0.25,
                            tokens={"input": 100000, "output": 82000}),
           *turn("proposal/codex", "codex", "proposal")]
    t = summary.totals(summary.turns(evs))
    assert t.cost_usd == 0.25 and not t.cost_complete
    assert summary.fmt_cost(t) == "$0.25 (+ unknown)"
    assert t.tokens == {"input": 100000, "output": 82000} and not t.tokens_complete
    assert summary.fmt_tokens(t.tokens, t.tokens_complete) == "182k tokens (+ unknown)"


def test_degraded_label_and_json_totals():
    evs = [started(), *turn("proposal/a", "a", "proposal", cost=0.1, evidence={"commands": 2}),
           *turn("proposal/codex", "codex", "proposal"),
           *turn("reaction-1/a", "a", "reaction", 1, evidence={"commands": 0}),
           *turn("reaction-1/codex", "codex", "reaction", 1, ok=False, failure="timeout",
                 message="no answer within 600 s", duration=602.4),
           *turn("respondeo-1", "judge", "respondeo", 1, text="STATUS: RESOLVED\nok")]
    arts = render_all(evs, "needs_input")
    md = arts.files["debate.md"]
    assert "codex timed out in reaction round 1: no answer within 600 s" in md
    assert "602" not in md.split("## Quaestio")[0]   # the limit, not the limit plus the grace
    import json

    data = json.loads(arts.files["debate.json"])
    assert data["degraded"] == [
        "codex timed out in reaction round 1: no answer within 600 s"]
    assert data["totals"]["turns"] == 5 and data["totals"]["failed"] == 1
    assert data["totals"]["cost_usd"] == 0.1 and data["totals"]["cost_complete"] is False
    assert data["totals"]["turns_with_commands"] == 1
    assert data["totals"]["turns_observed"] == 2
    assert arts.primary == "respondeo.md"


def test_failed_turn_marked_in_debate_md_and_interrupted_turn_noted():
    evs = [started(), *turn("proposal/a", "a", "proposal", ok=False, failure="auth",
                            message="Not logged in"),
           Ev("turn_started", {"turn_id": "proposal/codex", "role": "codex",
                               "seat": "participant", "phase": "proposal", "round": 0,
                               "adapter": "codex"})]
    md = render_all(evs, "interrupted").files["debate.md"]
    assert "**Failed (auth):** Not logged in" in md
    assert "**Did not finish**" in md
    assert "codex did not finish its proposal turn" in md


def test_degraded_names_each_participant_once_with_its_failed_attempts():
    evs = [started(), *turn("proposal/a", "a", "proposal")]
    for n in (1, 2, 3):   # a member retried within a round: each attempt its own turn
        evs += turn(f"round-1/codex/attempt-{n}", "codex", "round", 1, ok=False,
                    failure="api_error", message=f"overloaded {n}")
    arts = render_all(evs, "debated")
    import json

    line = "codex failed 3 attempts; the last failed (api_error) in round: overloaded 3"
    assert json.loads(arts.files["debate.json"])["degraded"] == [line]
    banner = arts.files["debate.md"].split("\n\n")[1]
    assert banner == f"> **Degraded debate.** {line}"


def test_degraded_counts_a_failed_turn_run_again_and_its_interruption_on_one_line():
    evs = [started(), *turn("proposal/codex", "codex", "proposal", ok=False, failure="auth",
                            message="Not logged in"),
           *turn("proposal/codex", "codex", "proposal", ok=False, failure="auth",
                 message="Still not logged in"),
           Ev("turn_started", {"turn_id": "reaction-1/codex", "role": "codex",
                               "seat": "participant", "phase": "reaction", "round": 1,
                               "adapter": "codex"})]
    assert summary.degradations(summary.turns(evs)) == [
        "codex failed 2 attempts; the last failed (auth) in proposal: Still not logged in; "
        "then did not finish its reaction turn (interrupted)"]


def test_evidence_summary_and_repo_mode_warning():
    repo_started = started()
    repo_started.data["repo"] = "/src/project"
    evs = [repo_started, *turn("proposal/a", "a", "proposal", evidence={"commands": 0}),
           *turn("proposal/codex", "codex", "proposal", evidence={"commands": 0})]
    arts = render_all(evs, "resolved")
    assert "evidence: 0 of 2 observed turns ran commands" in arts.files["debate.md"]
    assert "**Unverified.** No participant ran a command" in arts.files["debate.md"]
    import json

    assert json.loads(arts.files["debate.json"])["warnings"]
    evs[2].data["evidence"] = {"commands": 3}
    arts = render_all(evs, "resolved")
    assert "Unverified" not in arts.files["debate.md"]
    assert "evidence: 1 of 2 observed turns ran commands" in arts.files["debate.md"]


def test_no_repo_no_evidence_warning():
    evs = [started(), *turn("proposal/a", "a", "proposal", evidence={"commands": 0})]
    assert "Unverified" not in render_all(evs, "resolved").files["debate.md"]


def test_final_report_carries_its_provenance_and_agent_headings_are_quoted():
    evs = [started(), *turn("proposal/a", "a", "proposal", text="# Big claim\nbody"),
           *turn("proposal/codex", "codex", "proposal", ok=False, failure="auth",
                 message="Not logged in"),
           *turn("respondeo-1", "judge", "respondeo", 1, text="STATUS: RESOLVED\nok"),
           *turn("redactio-1", "judge", "redactio", 1, text="# Final report\nDo X.")]
    arts = render_all(evs, "resolved")
    report = arts.files["final-report.md"]
    assert report.startswith("> Q?\n>\n> disputatio · 2026-11-29 · 2 participants")
    assert "**Degraded:** codex failed (auth) in proposal" in report
    assert report.endswith("# Final report\nDo X.\n")
    assert "\n> # Big claim\n> body\n" in arts.files["debate.md"]


def totals_of(arts):
    import json

    md = arts.files["debate.md"]
    return md[md.index("## Totals"):], json.loads(arts.files["debate.json"])["totals"]


def test_a_turn_without_tokens_makes_the_token_total_a_marked_lower_bound():
    known = {"input": 100000, "output": 69000}
    evs = [started(), *turn("proposal/a", "a", "proposal", cost=0.5, tokens=known),
           *turn("proposal/codex", "codex", "proposal", cost=0.1)]   # no tokens reported
    md, data = totals_of(render_all(evs, "resolved"))
    assert "$0.60 · 169k tokens (+ unknown) ·" in md
    assert data["tokens"] == known and data["tokens_complete"] is False
    evs[-1].data["tokens"] = {"input": 1000, "output": 0}
    md, data = totals_of(render_all(evs, "resolved"))
    assert "$0.60 · 170k tokens ·" in md and "unknown" not in md
    assert data["tokens"] == {"input": 101000, "output": 69000} and data["tokens_complete"]


def test_every_attempt_of_a_turn_is_spent_and_an_unfinished_one_is_unknown():
    # proposal/a failed, then --resume ran it again: both attempts cost tokens
    evs = [started(), *turn("proposal/a", "a", "proposal", ok=False, failure="api_error",
                            message="500", cost=0.25, tokens={"input": 700, "output": 0}),
           *turn("proposal/a", "a", "proposal", cost=0.5, tokens={"input": 900, "output": 400}),
           *turn("proposal/codex", "codex", "proposal", cost=0.0,
                 tokens={"input": 10, "output": 5})]
    t = summary.totals(summary.turns(evs))
    assert (t.turns, t.failed) == (2, 0)
    assert t.cost_usd == 0.75 and t.cost_complete
    assert t.tokens == {"input": 1610, "output": 405} and t.tokens_complete
    # an attempt cut short by Ctrl-C spent what no one reported
    cut = turn("proposal/codex", "codex", "proposal")
    cut[1].type = "turn_interrupted"
    t = summary.totals(summary.turns([*evs[:-2], *cut, *evs[-2:]]))
    assert t.tokens == {"input": 1610, "output": 405} and not t.tokens_complete
    assert not t.cost_complete


def test_a_turn_whose_cli_never_started_spent_nothing():
    evs = [started(), *turn("proposal/a", "a", "proposal", cost=0.5,
                            tokens={"input": 900, "output": 100}),
           *turn("proposal/codex", "codex", "proposal", ok=False, failure="not_installed",
                 message="codex: No such file or directory")]
    t = summary.totals(summary.turns(evs))
    assert t.tokens_complete and t.cost_complete and t.failed == 1


def test_each_turns_session_id_and_tokens_are_shown():
    import json

    evs = [started(), *turn("proposal/a", "a", "proposal", tokens={"input": 1500, "output": 700},
                            session="9e85b4f0-697b-4bde-a08a-81343a52c96b"),
           *turn("proposal/codex", "codex", "proposal", session="`x`\n## Totals")]
    arts = render_all(evs, "resolved")
    md = arts.files["debate.md"]
    assert "_x · 1.0s · cost unknown · 2k tokens · session " \
           "`9e85b4f0-697b-4bde-a08a-81343a52c96b`_" in md
    # a session id is foreign text: it cannot end its code span or start a line
    assert "· tokens unknown · session `x ## Totals`_" in md and md.count("\n## Totals") == 1
    turns = {t["turn_id"]: t for t in json.loads(arts.files["debate.json"])["turns"]}
    assert turns["proposal/a"]["session_id"] == "9e85b4f0-697b-4bde-a08a-81343a52c96b"
    assert turns["proposal/codex"]["session_id"] == "`x`\n## Totals"


def test_the_one_line_summary_and_the_artifacts_mark_unknown_tokens(home):
    """A CLI that reports no tokens (a ``command`` participant) next to one that does."""
    import json

    from support import invoke, sim, write_config

    agent = home / "answer.sh"
    agent.write_text("#!/bin/sh\ncat >/dev/null\necho 'an answer without usage'\n")
    agent.chmod(0o755)
    plain = {"adapter": "command", "name": "plain", "argv": [str(agent)]}
    cfg = write_config(home / "d.yaml", [plain, sim("b")], rounds=0)
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    folder = Path(r.stdout.strip()).parent
    summary_line = r.stderr.strip().splitlines()[-1]
    assert summary_line.startswith("resolved · 2 participants"), r.stderr
    assert summary_line.endswith(" tokens (+ unknown)"), summary_line
    assert " tokens (+ unknown) · evidence" in (folder / "debate.md").read_text()
    totals = json.loads((folder / "debate.json").read_text())["totals"]
    assert totals["tokens_complete"] is False and totals["tokens"]["input"] > 0
