"""The lineup's judges before a debate starts: which seats rule, which are recused, and the
warnings that say so. Only the judges a protocol seats count (``seated``): the disputatio
protocol seats the judge and its jury (``"jury"``), the committee its judge alone
(``"judge"``), Wind/Wall/Door none (``None``); a judge who takes no part has nothing to be
recused from and biases nothing.

The decision is recorded in ``debate_started.recusal`` and read back by
``protocols.labels``; ``config`` re-exports these names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from disputatio import adapters

if TYPE_CHECKING:
    from disputatio.config import DebateConfig, Participant

JURY, JUDGE = "jury", "judge"


def jury_record(cfg: DebateConfig) -> list[dict[str, Any]] | None:
    """What ``debate_started.jury`` records: each juror's name, seat and weight (None: no jury)."""
    found = cfg.jurors()
    return [{"name": n, "seat": f"juror-{i}", "weight": int(w) if w == int(w) else w}
            for i, (n, _, w) in enumerate(found, start=1)] or None


def judges(cfg: DebateConfig, seated: str | None = JURY) -> dict[str, Participant]:
    """The judge seats that rule under the protocol, by the name they rule under."""
    if cfg.judge is None or seated is None:
        return {}
    jurors = {n: p for n, p, _ in cfg.jurors()} if seated == JURY else {}
    return {cfg.judge.name or "judge": cfg.judge, **jurors}


def conflicts(cfg: DebateConfig, seated: str | None = JURY) -> dict[str, list[str]]:
    """For each judge, the debaters whose arguments it should not rule on under ``recusal``:
    the same vendor, or (``model``) the same CLI and model. Only agent CLIs have a vendor."""
    if cfg.recusal == "off":
        return {}
    out: dict[str, list[str]] = {}
    for name, j in judges(cfg, seated).items():
        if j.kind != adapters.AGENT:
            continue
        same = [p.display for p in cfg.participants if p.kind == adapters.AGENT and (
            p.vendor == j.vendor if cfg.recusal == "vendor"
            else (p.adapter, p.model) == (j.adapter, j.model))]
        if same:
            out[name] = same
    return out


def recusal_record(cfg: DebateConfig, seated: str | None = JURY) -> dict[str, Any]:
    """What ``debate_started.recusal`` records: the mode, the conflicts, who is recused."""
    found = conflicts(cfg, seated)
    return {"mode": cfg.recusal, "conflicts": found,
            "recused": recused(found, list(judges(cfg, seated)))}


def recused(found: dict[str, list[str]], seats: list[str]) -> list[str]:
    """The judges that do not rule: those with a conflict, as long as at least one judge
    without any remains. With no such judge the lineup has no other choice, and every judge
    rules (the lineup warning says so)."""
    conflicted = [j for j in seats if found.get(j)]
    return [] if len(conflicted) == len(seats) else conflicted


def lineup_warnings(cfg: DebateConfig, seated: str | None = JURY) -> list[str]:
    """Lineups that weaken a debate: shared vendors agree too easily, a judge who debated
    grades its own work. Warnings, not errors: the user may have reasons. Each says what will
    happen: a recused judge is not said to rule."""
    out = []
    real = [p for p in cfg.participants if p.kind == adapters.AGENT]   # vendors known
    by_vendor: dict[str, list[str]] = {}
    for p in real:
        by_vendor.setdefault(p.vendor, []).append(p.display)
    for vendor, names in by_vendor.items():
        if len(names) > 1:
            out.append(f"participants {', '.join(names)} share a vendor ({vendor}); "
                       "their positions may converge")
    judge = cfg.judge
    if judge is None or seated is None:
        return out
    away = recusal_record(cfg, seated)["recused"]
    same = [p.display for p in cfg.participants
            if (p.adapter, p.model, p.bin, p.argv) == (judge.adapter, judge.model, judge.bin,
                                                        judge.argv)
            and p.kind != adapters.SIMULATED]   # no model, no bias
    if (judge.name or "judge") in away:
        pass   # the recusal warning below says it does not rule
    elif same:
        out.append(f"the judge is the same CLI and model as debater {same[0]}; "
                   "it will rule on its own arguments")
    elif judge.kind == adapters.AGENT and judge.vendor in by_vendor and cfg.recusal != "vendor":
        out.append(f"the judge shares a vendor ({judge.vendor}) with "
                   f"{', '.join(by_vendor[judge.vendor])}")
    out += _recusal_warnings(cfg, seated, said=bool(same))
    return out


def _recusal_warnings(cfg: DebateConfig, seated: str | None, said: bool) -> list[str]:
    """What recusal will do with this lineup, said before anything runs (``said``: a judge
    identical to a debater was already warned of)."""
    record = recusal_record(cfg, seated)
    found, away = record["conflicts"], record["recused"]
    seats = judges(cfg, seated)
    what = {"vendor": lambda j: f"a vendor ({seats[j].vendor})", "model": lambda j: "its model"}
    out = [f"judge {j} is recused: it shares {what[cfg.recusal](j)} with "
           f"{', '.join(found[j])} (recusal: {cfg.recusal}); the other judges rule"
           for j in away]
    if found and not away and not said:
        out += [f"the judge shares {what[cfg.recusal](j)} with {', '.join(ds)} and the lineup "
                f"has no judge without such a conflict, so it rules on their arguments anyway "
                f"(recusal: {cfg.recusal})" for j, ds in found.items()]
    return out
