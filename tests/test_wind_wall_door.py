"""The Wind/Wall/Door rules as pure functions of the ledger: who speaks when (fixed order, the
human's picks, a mediator's, a garbled pick), the limits that end a debate in exhaustion, Door's
call for the vote, consensus and stalemate, vote and pick parsing, role contracts as warnings or
strict refusals with bounded redos, and what a resume runs again. A scripted ``play`` answers
each step as the engine would, appending the events the ledger would hold."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from disputatio import folder, prompts
from disputatio.events import (
    DebateStarted,
    HumanActed,
    Resumed,
    TurnCompleted,
    TurnStarted,
)
from disputatio.protocols import wind_wall_door as wwd
from disputatio.protocols.base import Ask, Done, Step, TurnSpec
from support import invoke, sim, write_config

NAMES = ["ann", "bob", "cy"]
WIND = "What if…\n\n1. What if we cache?\n2. What if we shard?\n\nWhich is cheaper?"
WALL = "VERDICT: caching holds, sharding does not.\n\n## Evidence\n\n- bench.py: 2x faster"
DOOR = "Therefore…\n\n1. Cache the hot path.\n2. Measure again.\n\nCALL THE VOTE"
HOLD = "Therefore…\n\n1. Cache the hot path.\n2. Measure again.\n\nRound 2 must settle cost."


def ev(kind: str, model) -> SimpleNamespace:
    return SimpleNamespace(type=kind, data=model.to_data(), ts="2026-12-01T00:00:00.000Z",
                           seq=0, hash="0" * 64)


def begin(human: bool = False, flags: frozenset = frozenset(), **settings) -> list:
    cfg = wwd.Config.model_validate(settings, context={"flags": flags})
    cfg = wwd.check(cfg, NAMES, human)
    return [ev("debate_started", DebateStarted(
        quaestio="Cache or shard?", protocol="wind-wall-door", participants=NAMES,
        human=True if human else None, **wwd.started(cfg)))]


def answer(spec: TurnSpec, text: str, ok: bool = True) -> SimpleNamespace:
    return ev("turn_completed", TurnCompleted(
        turn_id=spec.turn_id, role=spec.participant, seat=spec.role, phase=spec.phase,
        round=spec.round, adapter="simulated", ok=ok, text=text if ok else "",
        failure=None if ok else "timeout", message="" if ok else "timed out after 600 s"))


def good(spec: TurnSpec) -> str:
    return {"wind": WIND, "wall": WALL, "door": DOOR, "refine": DOOR, "vote": "APPROVE",
            "pick": "WIND"}[spec.phase]


def play(events: list, script: Callable[[TurnSpec], str | None] = good,
         human: Callable[[Ask], HumanActed] | None = None, limit: int = 60):
    """Run the protocol to its end as the engine would: every step's turns answered by
    ``script`` (None: the turn fails), every question by ``human``. Returns the specs run,
    the questions asked, and the end."""
    specs: list[TurnSpec] = []
    asked: list[Ask] = []
    for _ in range(limit):
        step = wwd.next_step(wwd.state(events))
        if isinstance(step, Done):
            return specs, asked, step
        if isinstance(step, Ask):
            asked.append(step)
            assert human is not None, f"asked the human: {step}"
            events.append(ev("human_acted", human(step)))
            continue
        for spec in step.turns:
            specs.append(spec)
            text = script(spec)
            events.append(answer(spec, text or "", ok=text is not None))
    raise AssertionError("the debate never ended")


def ids(specs: list[TurnSpec]) -> list[str]:
    return [s.turn_id for s in specs]


def prompt_of(spec: TurnSpec) -> str:
    return prompts.render(spec.template, spec.variables)


# --- order ------------------------------------------------------------------------------

def test_fixed_order_binds_roles_to_participants_and_ends_in_synthesis():
    events = begin(wind="cy", wall="ann", door="bob")
    specs, _, done = play(events)
    assert ids(specs) == ["turn-1/wind", "turn-2/wall", "turn-3/door", "vote-1/wind",
                          "vote-1/wall"]
    assert [(s.participant, s.role) for s in specs[:3]] == [
        ("cy", "wind"), ("ann", "wall"), ("bob", "door")]
    assert [s.participant for s in specs[3:]] == ["cy", "ann"]   # Wind votes, then Wall
    assert done == Done("synthesis", "Wind and Wall approved Door's synthesis")
    assert "(phase: wall, turn 2, round 1 of at most 4)" in prompt_of(specs[1])
    assert "### Wind (Participant C), turn 1 — “What if…”" in prompt_of(specs[1])


def test_roles_default_to_lineup_order_and_one_participant_may_play_several():
    cfg = wwd.check(wwd.Config(), NAMES, False)
    assert (cfg.wind, cfg.wall, cfg.door) == ("ann", "bob", "cy")
    two = wwd.check(wwd.Config(), ["ann", "bob"], False)
    assert (two.wind, two.wall, two.door) == ("ann", "bob", "ann")
    specs, _, done = play(begin(wind="ann", wall="ann", door="ann"))
    assert {s.participant for s in specs} == {"ann"} and done.status == "synthesis"


def test_the_human_picks_each_speaker_in_the_mediated_order():
    picks = iter(["Wall", "Wind", "Door"])
    events = begin(human=True, order="mediated")
    specs, asked, done = play(events, human=lambda a: HumanActed(
        key=a.key, round=a.round, action="pick", choice=next(picks)))
    assert [a.key for a in asked] == ["pick-1", "pick-2", "pick-3"]
    assert asked[0].choices == ("pick",) and asked[0].options == ("Wind", "Wall", "Door")
    assert ids(specs)[:3] == ["turn-1/wall", "turn-2/wind", "turn-3/door"]
    assert done.status == "synthesis"
    md = folder.render_all(events, done.status, done.reason).files["debate.md"]
    assert "_The human gives turn 1 to Wall._" in md


def test_the_humans_first_pick_tells_who_sits_the_debate_out():
    events = begin(human=True, order="mediated", wind="ann", wall="ann", door="bob")
    ask = wwd.next_step(wwd.state(events))
    assert isinstance(ask, Ask) and ask.notes == (
        "cy plays no role and sits this debate out (protocol: wind, wall and door name who "
        "plays each role)",)
    events.append(ev("human_acted", HumanActed(key=ask.key, round=ask.round, action="pick",
                                               choice="Wind")))
    step = wwd.next_step(wwd.state(events))
    assert isinstance(step, Step) and step.notes == ()   # told once


def test_a_mediator_participant_picks_and_a_garbled_pick_falls_back_to_the_fixed_order():
    answers = {"pick-1": "Hmm, WIND or WALL, both have merit.", "pick-2": "**Next:** wall",
               "pick-3": "DOOR"}
    events = begin(order="mediated", mediator="cy")
    specs, _, done = play(events, lambda s: answers.get(s.turn_id) or good(s))
    assert ids(specs)[:6] == ["pick-1", "turn-1/wind", "pick-2", "turn-2/wall", "pick-3",
                              "turn-3/door"]
    assert specs[0].participant == "cy" and specs[0].template == "wwd-pick"
    assert "fixed order would give the floor to Wind" in prompt_of(specs[0])
    assert done.status == "synthesis"
    md = folder.render_all(events, done.status, done.reason).files["debate.md"]
    assert "The mediator's answer named no one role: the fixed order gives turn 1 to Wind" in md


def test_a_starved_door_ends_the_mediated_debate_in_exhaustion():
    specs, _, done = play(begin(order="mediated", mediator="cy", max_turns=5),
                          lambda s: "WIND" if s.phase == "pick" else good(s))
    assert [s.turn_id for s in specs if s.phase != "pick"] == [f"turn-{n}/wind"
                                                                for n in range(1, 6)]
    assert done.status == "exhaustion" and "max_turns 5" in done.reason


@pytest.mark.parametrize("text, role", [
    ("WALL", "wall"), ("door.", "door"), ("**Next:** Wind", "wind"), ("pick - DOOR", "door"),
    ("\n\n  wall  \nbecause", "wall"), ("WIND or WALL", None), ("I pick wall", None),
    ("", None), ("Wallace", None)])
def test_a_pick_is_the_one_role_the_first_line_names(text, role):
    assert wwd.parse_pick(text) == role


# --- limits -----------------------------------------------------------------------------

def test_exhaustion_by_turns_when_door_never_calls_the_vote():
    specs, _, done = play(begin(max_turns=4), lambda s: HOLD if s.phase == "door" else good(s))
    assert ids(specs) == ["turn-1/wind", "turn-2/wall", "turn-3/door", "turn-4/wind"]
    assert done == Done("exhaustion", "4 turns, the most allowed (max_turns 4), and Door never "
                                      "called the vote")


def test_exhaustion_by_rounds_and_door_is_told_its_last_turn():
    specs, _, done = play(begin(max_rounds=2), lambda s: HOLD if s.phase == "door" else good(s))
    assert len(specs) == 6 and done.status == "exhaustion"
    assert "2 rounds, the most allowed (max_rounds 2)" in done.reason
    doors = [s for s in specs if s.phase == "door"]
    assert "last turn the limits allow" not in prompt_of(doors[0])
    assert "last turn the limits allow" in prompt_of(doors[1])


def test_rounds_from_the_command_line_is_max_rounds_and_a_rounds_key_is_refused():
    assert wwd.Config.ROUNDS_FLAG == "max_rounds"   # what --rounds sets (preflight)
    with pytest.raises(ValueError, match="rounds"):
        wwd.Config.model_validate({"rounds": 1})


def test_synthesis_md_says_an_exhausted_debate_was_never_voted_on():
    events = begin(max_rounds=1)
    _, _, done = play(events, lambda s: HOLD if s.phase == "door" else good(s))
    files = folder.render_all(events, done.status, done.reason).files
    assert "**Outcome: exhaustion**" in files["synthesis.md"]
    assert "never voted on" in files["synthesis.md"]


# --- the vote -----------------------------------------------------------------------------

def test_a_rejection_sends_the_feedback_to_door_who_refines_until_both_approve():
    votes = {"vote-1/wall": "REJECT\n\nSay what the cache costs.", "vote-2/wind": "APPROVE"}
    events = begin()
    specs, _, done = play(events, lambda s: votes.get(s.turn_id) or good(s))
    assert ids(specs)[3:] == ["vote-1/wind", "vote-1/wall", "refine-1/door", "vote-2/wind",
                              "vote-2/wall"]
    refine = prompt_of(specs[5])
    assert "Wall (Participant B) rejected your synthesis" in refine
    assert "> Say what the cache costs." in refine
    assert done == Done("synthesis", "Wind and Wall approved Door's synthesis after 1 refinement")
    files = folder.render_all(events, done.status, done.reason).files
    assert "CALL THE VOTE" not in files["synthesis.md"]
    assert "## Vote on synthesis 1, Wall: REJECT — bob" in files["debate.md"]


def test_stalemate_after_max_refinement_loops_and_wall_never_votes_on_what_wind_rejects():
    events = begin()
    specs, _, done = play(events, lambda s: "REJECT: no." if s.phase == "vote" else good(s))
    assert [s.turn_id for s in specs if s.phase != "vote"][3:] == [
        "refine-1/door", "refine-2/door", "refine-3/door"]
    assert not [s for s in specs if s.turn_id.endswith("/wall") and s.phase == "vote"]
    assert done == Done("stalemate", "Wind rejected Door's synthesis after 3 refinements")
    assert wwd.ending(done, "x/synthesis.md").failed is False
    md = folder.render_all(events, done.status, done.reason).files["synthesis.md"]
    assert "**Wind (ann) rejected it:**" in md and "not an agreed one" in md


def test_no_refinement_allowed_means_stalemate_at_the_first_rejection():
    _, _, done = play(begin(max_refinement_loops=0),
                      lambda s: "REJECT" if s.turn_id == "vote-1/wall" else good(s))
    assert done.status == "stalemate"


@pytest.mark.parametrize("text, vote", [
    ("APPROVE", "APPROVE"), ("approved.\nGood work", "APPROVE"), ("**APPROVE**", "APPROVE"),
    ("Vote: APPROVE", "APPROVE"), ("\n\nAPPROVE\n\nI would reject a bigger plan", "APPROVE"),
    ("REJECT", "REJECT"), ("", "REJECT"), ("Looks good to me.", "REJECT"),
    ("I approve", "REJECT"), ("APPROVE or REJECT? REJECT", "REJECT"),
    ("APPROVE, though I almost rejected it", "REJECT"), ("Approvers disagree", "REJECT")])
def test_a_vote_is_approve_only_when_the_first_line_says_so_alone(text, vote):
    assert wwd.parse_vote(text) == vote


def test_the_vote_prompt_says_the_rule_parse_vote_applies():
    specs, _, _ = play(begin())
    prompt = prompt_of(next(s for s in specs if s.phase == "vote"))
    rule = prompt[prompt.index("- Vote on the first line"):prompt.index("- If you reject")]
    assert "exactly" not in rule and "nothing else" not in rule
    examples = re.findall(r'"([^"]+)"', rule)
    assert len(examples) == 3
    for example in examples:   # each example counts as the vote it starts with
        want = wwd.REJECT if example.upper().startswith("REJECT") else wwd.APPROVE
        assert wwd.parse_vote(example + "\n\nBecause.") == want, example


# --- contracts ------------------------------------------------------------------------------

@pytest.mark.parametrize("role, text, broken", [
    ("wind", WIND, []),
    ("wind", "What if we cache? That is all.", ["fewer than two options as list items"]),
    ("wind", "- cache\n- shard", ["no question"]),
    ("wall", WALL, []),
    ("wall", "**Verdict:** no.\n\n[EVIDENCE] bench.py", []),
    ("wall", "It depends.\n\n## Evidence\n\n- none", ["no VERDICT: within its first 200 "
                                                      "characters"]),
    ("wall", "VERDICT: no.", ["no EVIDENCE section"]),
    ("door", DOOR, []),
    ("door", "Therefore we cache.", ["no synthesis in numbered steps (1., 2., …)"])])
def test_role_contracts(role, text, broken):
    assert wwd.breaches(role, text) == broken


def test_without_strict_a_breach_stands_as_a_warning_in_debate_md():
    events = begin()
    specs, _, done = play(events, lambda s: "VERDICT: no." if s.phase == "wall" else good(s))
    assert "turn-2/wall.redo-1" not in ids(specs) and done.status == "synthesis"
    md = folder.render_all(events, done.status, done.reason).files["debate.md"]
    assert "**Contract warning:** this answer breaks Wall's contract: no EVIDENCE section" in md


def test_strict_refuses_a_breach_and_the_role_redoes_it_with_the_reason():
    events = begin(strict=True)
    specs, _, done = play(events, lambda s: "VERDICT: no." if s.turn_id == "turn-2/wall"
                          else good(s))
    assert ids(specs)[:4] == ["turn-1/wind", "turn-2/wall", "turn-2/wall.redo-1", "turn-3/door"]
    redo = prompt_of(specs[2])
    assert "## Your previous answer was refused" in redo and "no EVIDENCE section" in redo
    door = prompt_of(specs[3])
    assert "VERDICT: caching holds" in door and "> VERDICT: no." not in door   # refused: unseen
    assert done.status == "synthesis"
    md = folder.render_all(events, done.status, done.reason).files["debate.md"]
    assert "**Refused:** this answer breaks Wall's contract" in md and "(redo 1)" in md


def test_strict_redos_are_bounded_then_the_debate_is_force_closed():
    specs, _, done = play(begin(strict=True, max_redos=1),
                          lambda s: "no plan" if s.phase == "door" else good(s))
    assert ids(specs)[2:] == ["turn-3/door", "turn-3/door.redo-1"]
    assert done.status == "force_closed" and "Door (cy) broke its contract 2 times" in done.reason
    assert wwd.ending(done, "debate.md").failed is True


def test_every_prompt_stays_bounded_whatever_the_roles_wrote():
    big = "x" * 250_000
    specs, _, done = play(begin(), lambda s: {
        "vote": "REJECT\n" + big, "door": DOOR + "\n" + big, "refine": DOOR + "\n" + big,
        "wind": WIND + "\n" + big, "wall": WALL + "\n" + big}.get(s.phase, good(s)))
    assert done.status == "stalemate" and any(s.phase == "refine" for s in specs)
    # the transcript's 200k, the synthesis and the feedback 40k each, and our own text
    assert max(len(prompt_of(s)) for s in specs) < 285_000


def test_a_turn_cut_short_is_placed_by_its_round_and_turn():
    events = begin()
    step = wwd.next_step(wwd.state(events))
    assert isinstance(step, Step)
    events.append(answer(step.turns[0], WIND))
    wall = wwd.next_step(wwd.state(events)).turns[0]
    events.append(ev("turn_started", TurnStarted(
        turn_id=wall.turn_id, role=wall.participant, seat=wall.role, phase=wall.phase,
        round=wall.round, adapter="simulated")))
    md = folder.render_all(events, "interrupted", "signal").files["debate.md"]
    assert "bob did not finish its wall turn in round 1, turn 2 (interrupted)" in md


# --- the human after a round, resume, configuration ----------------------------------------

def test_with_a_human_in_the_fixed_order_a_steer_after_a_round_reaches_the_next_prompts():
    events = begin(human=True)
    specs, asked, done = play(
        events, lambda s: HOLD if s.turn_id == "turn-3/door" else good(s),
        human=lambda a: HumanActed(key=a.key, round=a.round, action="steer",
                                   text="Mind the cache's memory"))
    assert [a.key for a in asked] == ["round-1"] and asked[0].participants == (
        "Wind", "Wall", "Door")
    assert "> Mind the cache's memory" in prompt_of(specs[3])       # turn 4, Wind
    assert "Mind the cache's memory" not in prompt_of(specs[2])
    assert done.status == "synthesis"


def test_a_failed_turn_stops_the_debate_and_resume_runs_exactly_it_again():
    events = begin()
    specs, _, done = play(events, lambda s: None if s.turn_id == "vote-1/wall" else good(s))
    assert done.status == "failed" and "the vote on synthesis 1" in done.reason
    assert wwd.retry(wwd.state(events), done) == ["vote-1/wall"]
    assert wwd.ending(done, "debate.md").failed is True
    events.append(ev("resumed", Resumed(retry=["vote-1/wall"])))
    step = wwd.next_step(wwd.state(events))
    assert isinstance(step, Step) and ids(list(step.turns)) == ["vote-1/wall"]
    _, _, done = play(events)
    assert done.status == "synthesis"
    for status in ("synthesis", "stalemate", "exhaustion", "force_closed"):
        assert wwd.retry(wwd.state(events), Done(status)) is None


@pytest.mark.parametrize("settings, human, message", [
    ({"wind": "zed"}, False, "protocol.wind: 'zed' is not a participant of the lineup "
                             "(ann, bob, cy)"),
    ({"mediator": "ann"}, False, "protocol.mediator: only the mediated order has a mediator"),
    ({"order": "mediated", "mediator": "zed"}, False, "protocol.mediator: 'zed' is not"),
    ({"order": "mediated"}, False, "run with --human")])
def test_settings_that_name_nobody_or_need_a_human_are_refused(settings, human, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        wwd.check(wwd.Config.model_validate(settings), NAMES, human)
    assert wwd.check(wwd.Config(order="mediated"), NAMES, True).order == "mediated"


# --- through the command line, in this process ------------------------------------------------

def test_a_role_naming_nobody_is_refused_before_anything_is_made(home, tmp_path):
    cfg = write_config(tmp_path / "d.yaml", [sim("ann"), sim("bob")], protocol={"door": "zed"})
    r = invoke("run", "--protocol", "wind-wall-door", "q", "--config", str(cfg), cwd=home)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"error: {cfg}:2: protocol.door: 'zed' is not a participant of the " \
                       "lineup (ann, bob)\n"   # the line of door:, below protocol:
    assert not (home / ".debate").exists()


LINEUP = ("participants:\n  - {adapter: simulated, name: ann, model: a}\n"
          "  - {adapter: simulated, name: bob, model: b}\nprotocol:\n  max_turns: 6\n")


@pytest.mark.parametrize("settings, said", [
    ("  wind: zed\n", "6: protocol.wind: 'zed' is not a participant of the lineup (ann, bob)"),
    ("  order: mediated\n  mediator: nobody\n", "7: protocol.mediator: 'nobody' is not a "
                                                "participant"),
    ("  order: fixed\n  mediator: ann\n", "7: protocol.mediator: only the mediated order"),
    ("  order: mediated\n", "6: protocol.order: in the mediated order without a 'mediator'"),
    ("  strict: yes\n", "6: protocol.strict: Input should be a valid boolean"),
    ("  strict: on\n", "6: protocol.strict: Input should be a valid boolean")])
def test_a_wrong_setting_is_refused_at_its_own_line(home, tmp_path, settings, said):
    cfg = tmp_path / "d.yaml"
    cfg.write_text(LINEUP + settings)
    r = invoke("run", "--protocol", "wind-wall-door", "q", "--config", str(cfg), cwd=home)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"error: {cfg}:{said}"), r.stderr
    assert not (home / ".debate").exists()


def test_strict_takes_true_or_false(home, tmp_path):
    cfg = tmp_path / "d.yaml"
    cfg.write_text(LINEUP + "  strict: true\n  max_redos: 0\n")
    r = invoke("run", "--protocol", "wind-wall-door", "q", "--config", str(cfg), "-q", cwd=home)
    assert r.returncode == 0, r.stderr
    started = json.loads(next((home / ".debate").glob("debate-*/events.jsonl")).read_text()
                         .splitlines()[0])["data"]
    assert started["settings"]["strict"] is True


@pytest.mark.parametrize("people, status", [
    ([sim("ann"), sim("bob", DISPUTATIO_SIM_VOTE="reject"), sim("cy")], "stalemate"),
    ([sim("ann"), sim("bob"), sim("cy", DISPUTATIO_SIM_WWD="hold")], "exhaustion")])
def test_quiet_prints_the_path_alone_whatever_the_ending(home, tmp_path, people, status):
    cfg = write_config(tmp_path / "d.yaml", people, protocol={"max_rounds": 1})
    loud = invoke("--protocol", "wind-wall-door", "q", "--config", str(cfg), cwd=home)
    assert loud.returncode == 0 and f"\n{status}: " in loud.stderr, loud.stderr
    assert "1 rounds" not in loud.stderr   # "exhaustion: 1 round, the most allowed"
    quiet = invoke("--protocol", "wind-wall-door", "q", "--config", str(cfg), "-q", cwd=home)
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert json.loads((Path(quiet.stdout.strip()).parent / "debate.json").read_text())[
        "status"] == status


def test_the_demo_shows_the_protocol_and_protocols_lists_it(home):
    r = invoke("--demo", "--protocol", "wind-wall-door", "Cache or shard?", "-q", cwd=home)
    assert r.returncode == 0, r.stderr
    path = Path(r.stdout.strip())
    assert path.name == "synthesis.md"
    data = json.loads((path.parent / "debate.json").read_text())
    # the simulated skeptic (Wall) rejects the first synthesis; Door refines; both approve
    assert [t["turn_id"] for t in data["turns"]][3:] == [
        "vote-1/wind", "vote-1/wall", "refine-1/door", "vote-2/wind", "vote-2/wall"]
    assert data["status"] == "synthesis"
    listed = invoke("protocols").stdout.splitlines()
    assert [line.split(None, 1) for line in listed if line.startswith("wind-wall-door ")] == [
        ["wind-wall-door", "The Wind / Wall / Door protocol: three roles, a synthesis, and a "
                           "vote on it."]]


# --- through the use cases, with a scripted human ----------------------------------------------

def test_human_picks_through_app_a_human_who_leaves_stops_it_and_resume_asks_again(home,
                                                                                   tmp_path):
    from disputatio import app, config, ledger
    from disputatio.context import RunContext
    from disputatio.outcome import EXIT_INTERRUPTED, EXIT_OK

    asked: list[Ask] = []

    def picks(*choices: str):
        left = list(choices)

        def human(ask: Ask) -> HumanActed | None:
            asked.append(ask)
            return HumanActed(key=ask.key, round=ask.round, action="pick",
                              choice=left.pop(0)) if left else None
        return human

    path = write_config(tmp_path / "d.yaml", [sim("ann"), sim("bob"), sim("cy")],
                        protocol={"order": "mediated"})
    cfg, _ = config.load(path)
    out = app.run("Cache or shard?", cfg, app.RunOptions(quiet=True, human=True), base=home,
                  protocol="wind-wall-door", context=RunContext(human=picks("Wall")))
    assert out.code == EXIT_INTERRUPTED and "disputatio resume --human" in out.message
    debate = next((home / ".debate").glob("debate-*"))
    out = app.resume(debate, quiet=True, context=RunContext(human=picks("Wind", "Door")))
    assert out.code == EXIT_OK and out.path == debate / "synthesis.md"
    assert [a.key for a in asked] == ["pick-1", "pick-2", "pick-2", "pick-3"]
    evs = ledger.load(debate / "events.jsonl")
    assert [e.data["choice"] for e in evs if e.type == "human_acted"] == ["Wall", "Wind", "Door"]
    assert [e.data["turn_id"] for e in evs if e.type == "turn_completed"][:3] == [
        "turn-1/wall", "turn-2/wind", "turn-3/door"]
    assert "_The human gives turn 2 to Wind._" in (debate / "debate.md").read_text()
    assert app.verify(debate).code == EXIT_OK
