"""How a Wind/Wall/Door debate reads: titles by role and voice, lines of ours between turns
(the roles, the human's actions, picks, contract notes, the call for the vote) and
``synthesis.md``, the deliverable, with the outcome above Door's latest synthesis."""

from __future__ import annotations

from disputatio.protocols.base import Done, Presentation, Turn, human_lines
from disputatio.protocols.wind_wall_door_rules import APPROVE, CALL, REJECT
from disputatio.protocols.wind_wall_door_state import (
    MODE,
    ROLES,
    TITLE,
    VOICE,
    Course,
    State,
    number,
    rank,
    where_of,
)
from disputatio.text import one_line, quote, sanitize


def present(s: State, c: Course) -> Presentation:
    picks = {h.key: h.choice for h in s.human if h.action == "pick"}
    unshown = [h for h in s.human if h.action != "pick"]
    roles_shown: list[bool] = []
    after: list[str] = []   # the contract note on the turn shown last: it follows that turn

    def interlude(t: Turn) -> list[str]:
        """Lines of ours before a turn: the contract note on the turn before it, the roles
        (once), the human's actions after the round before it, who picked the speaker, the
        call for a vote."""
        lines, after[:] = after[:], []
        if not roles_shown:
            roles_shown.append(True)
            lines += _roles_block(s)
        tid, n = t.turn_id, number(t.turn_id)
        lead = f"pick-{n}" if s.cfg.mediator else f"turn-{n}/{t.seat}"
        if tid == lead:
            due = [h for h in unshown if h.round <= (n - 1) // 3]
            for h in due:
                unshown.remove(h)
            lines += human_lines(due)
        if tid == f"turn-{n}/{t.seat}":
            if f"pick-{n}" in picks:
                chosen = one_line(picks[f"pick-{n}"] or "", 40)
                lines += [f"_The human gives turn {n} to {chosen}._", ""]
            lines += c.notes.get(f"turn {n}", [])
        if tid == f"vote-{n}/wind":   # a line, not a heading: the votes have their own
            lines += [f"_Door called the vote on its synthesis at turn {c.called}._" if n == 1
                      else f"_Door put refinement {n - 1} to the vote._", ""]
        after.extend(c.notes.get(tid, []))
        return lines

    # the last vote is no verdict: show and the page say nothing of one (the status and its
    # reason say how the vote went); debate.json keeps it under its old key
    vote = c.votes[-1][2] if c.votes else None
    facts: dict[str, str | None] = {"Rounds": f"at most {s.cfg.max_rounds}"}
    if s.started.judge:
        facts["Judge"] = None   # the lineup's judge takes no part in this protocol
    held = max((t.round for _, t in c.spoken if t.turn_id.startswith("turn-")), default=0)
    return Presentation(verdict=None, extra={"verdict": vote, "rounds_held": held},
                        title=lambda t: _title(c, t),
                        order=lambda t, ps: rank(t.turn_id), interlude=interlude,
                        where=_where, coda=lambda: after[:],
                        documents=lambda ended, header: _documents(s, c, header),
                        facts=facts)


def _where(t: Turn) -> str:
    """A turn's place in a sentence, with its round for a debate turn."""
    where = where_of(t.turn_id)
    return f"round {t.round}, {where}" if t.turn_id.startswith("turn-") else where


def idle_players(s: State) -> list[str]:
    """The participants who neither play a role nor mediate: they sit the debate out."""
    busy = {s.player(r) for r in ROLES} | {s.cfg.mediator}
    return [p for p in s.participants if p not in busy]


def sits_out(names: list[str]) -> str:
    """The idle participants, in a sentence."""
    who = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{who} {'plays' if len(names) == 1 else 'play'} no role and " \
        f"{'sits' if len(names) == 1 else 'sit'} this debate out"


def _roles_block(s: State) -> list[str]:
    cfg = s.cfg
    lines = ["## The roles", ""]
    lines += [f"- **{TITLE[r]}** ({MODE[r]}, “{VOICE[r]}”): {s.player(r)}" for r in ROLES]
    order = "Wind → Wall → Door" if cfg.order == "fixed" else \
        f"mediated: {cfg.mediator or 'the human'} picks each speaker"
    loops = cfg.max_refinement_loops
    refinements = "no refinement" if loops == 0 else \
        f"at most {loops} refinement{'' if loops == 1 else 's'}"
    lines += ["", f"Order: {order} · at most {cfg.max_turns} turns and {cfg.max_rounds} "
              f"rounds · {refinements} · contracts "
              f"{'enforced (strict)' if cfg.strict else 'as warnings'}"]
    idle = idle_players(s)
    if idle:
        lines += ["", sits_out(idle) + "."]
    return lines + [""]


def _title(c: Course, t: Turn) -> str:
    role = t.seat if t.seat in ROLES else ""
    redo = f" (redo {t.turn_id.rsplit('.redo-', 1)[1]})" if ".redo-" in t.turn_id else ""
    if t.phase == "vote":
        verdict = next((v for k, r, v, x in c.votes if x.turn_id == t.turn_id), None)
        return f"Vote on synthesis {t.round}, {TITLE.get(role, role)}" + \
            (f": {verdict}" if verdict else "")
    if t.phase == "pick":
        return f"The mediator's pick for turn {number(t.turn_id)}"
    where = f"refinement {t.round}" if t.phase == "refine" else \
        f"turn {number(t.turn_id)}, round {t.round}"
    return f"{TITLE.get(role, role)} · “{VOICE.get(role, '')}” · {where}{redo}"


def _documents(s: State, c: Course, header: str) -> tuple[dict[str, str], str | None]:
    """synthesis.md: Door's latest synthesis under the outcome, the deliverable; none while
    Door has not spoken."""
    t = c.synthesis
    if t is None:
        return {}, None
    done = c.next if isinstance(c.next, Done) else None
    status = done.status if done else "in progress"
    why = {"synthesis": "Wind and Wall approved it.",
           "stalemate": f"{_last_vote(c)}: this is Door's last synthesis, not an agreed one.",
           "exhaustion": "the limits ran out before Door called the vote: this is Door's last "
                         "word, never voted on."}.get(status, "the debate has not ended.")
    where = f"refinement {t.round}" if t.phase == "refine" else f"turn {number(t.turn_id)}"
    lines = [f"**Outcome: {status}** — {done.reason if done and done.reason else why}", "",
             f"_{why[0].upper()}{why[1:]} Door: {s.player('door')}, {where}._", ""]
    last = c.votes[-1] if c.votes else None
    if last and last[2] == REJECT:
        lines += [f"**{s.label(last[1])} rejected it:**", "", quote(last[3].text.strip()), ""]
    # the house's header says "no judge" (the lineup's takes no part here): name the roles
    header = header.replace(" · no judge", "".join(f" · {TITLE[r]} {s.player(r)}"
                                                   for r in ROLES), 1)
    body = CALL.sub("", sanitize(t.text)).strip()   # the call was for the vote, not the reader
    return {"synthesis.md": header + "# Synthesis\n\n" + "\n".join(lines) + "\n" + body
            + "\n"}, "synthesis.md"



def _last_vote(c: Course) -> str:
    """How the last vote went, from its votes (Wall does not vote on what Wind rejected)."""
    k = c.votes[-1][0] if c.votes else 0
    said = {voter: verdict for n, voter, verdict, _ in c.votes if n == k}
    if "wall" not in said:
        return "Wind rejected it, so Wall did not vote on it"
    word = {APPROVE: "approved", REJECT: "rejected"}
    return f"Wind {word[said['wind']]} it and Wall {word[said['wall']]} it"
