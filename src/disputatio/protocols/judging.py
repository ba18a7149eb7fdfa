"""Judging as data: what a judge answers (a fenced ``json`` block, validated here), and the
verdict computed from it in code — never from a sentence. With a jury, several judges rule on
the same points and each point is decided by a weighted count, ties and splits reported as such.

Pure: text and ballots in, models and a ``Judgment`` out. ``docs/findings.md`` documents the
structure the judge is asked for and what ``debate.json`` carries of it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

RESOLVED = "RESOLVED"
NEEDS_INPUT = "NEEDS_INPUT"
UNCLEAR = "UNCLEAR"

RULINGS = ("upheld", "rejected", "open")
SEVERITIES = ("blocking", "major", "minor", "info")   # gravest first
# what a point ends as: a ruling, or no ruling because the votes did not make one
TIED, SPLIT = "tied", "split"

Ruling = Literal["upheld", "rejected", "open"]
Severity = Literal["blocking", "major", "minor", "info"]
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")


def _lower(v: Any) -> Any:
    return v.strip().lower() if isinstance(v, str) else v


class _Model(BaseModel):
    # keys we did not ask for are ignored, not refused: a judge may say more than we need
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class Evidence(_Model):
    """What a ruling rests on: a file and line, a command and its output, or a note."""

    file: str | None = None
    line: int | None = Field(None, ge=1)
    command: str | None = None
    output: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _something(self) -> Evidence:
        if not (self.file or self.command or self.note):
            raise ValueError("a piece of evidence needs a file, a command or a note")
        return self


class Vote(_Model):
    """One judge's ruling on one point."""

    id: str
    ruling: Ruling
    severity: Severity | None = None
    reasons: str = ""
    evidence: list[Evidence] = Field(default_factory=list)

    _norm = field_validator("ruling", "severity", mode="before")(_lower)

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not _ID.match(v):
            raise ValueError("an id is 1-32 letters, digits, '.', '_' or '-' (e.g. F1)")
        return v


class Finding(Vote):
    """A contested point as the judge fixes it: what is at issue, who raised it, where."""

    point: str = Field(min_length=1)
    severity: Severity
    raised_by: list[str] = Field(default_factory=list)
    file: str | None = None
    line: int | None = Field(None, ge=1)


class _Answer(_Model):
    status: Literal["resolved", "needs_input"]
    questions: list[str] = Field(default_factory=list)
    summary: str = ""

    _norm = field_validator("status", mode="before")(_lower)

    @model_validator(mode="after")
    def _status_matches_questions(self) -> _Answer:
        asked = [q for q in self.questions if q.strip()]
        if self.status == "needs_input" and not asked:
            raise ValueError("status is needs_input but there are no questions for the human")
        if self.status == "resolved" and asked:
            raise ValueError("there are questions for the human but status is resolved: use "
                             "needs_input, or leave questions empty")
        return self


class Answer(_Answer):
    """What the judge returns: the points with its rulings, and what it needs of the human.
    ``new_ground``: (after the human's answers) they raise matters the debaters never argued."""

    findings: list[Finding] = Field(default_factory=list)
    agreements: list[str] = Field(default_factory=list)
    new_ground: bool = False

    @model_validator(mode="after")
    def _unique_ids(self) -> Answer:
        ids = [f.id for f in self.findings]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"finding ids must be unique: {', '.join(twice)} used twice")
        return self


class Ballot(_Answer):
    """What a juror returns: a ruling on each point the jury was given (by id)."""

    findings: list[Vote] = Field(default_factory=list)


# --- reading an answer --------------------------------------------------------------------

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*json[ \t]*\n(.*?)^ {0,3}\1[ \t]*$",
                    re.MULTILINE | re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Read:
    """An answer as read: the model (None when it could not be read, with why) and the prose
    around its block."""

    answer: Any
    prose: str
    error: str | None = None


def read(text: str, model: type[_Answer] = Answer, quoted: Iterable[str] = ()) -> Read:
    """The fenced ``json`` block of ``text`` that fits ``model``; prose is the rest. Blocks
    that do not fit (an example, a snippet) are prose; two blocks that fit and differ are two
    rulings, and which one the judge meant is never guessed; with none that fits, the last
    block says why. A block holding the same data as a block of ``quoted`` (the debaters'
    answers, the question) is a quotation, not a ruling: a participant cannot rule by writing
    a block the judge repeats."""
    blocks = list(_FENCE.finditer(text))
    if not blocks:
        return Read(None, text.strip(), "no fenced ```json block was found in the answer")
    copies = {_canonical(m.group(2)) for q in quoted for m in _FENCE.finditer(q)} - {None}
    own = [b for b in blocks if _canonical(b.group(2)) not in copies]
    if not own:
        return Read(None, text.strip(), "the ```json block is copied from the debate (an "
                    "answer or the question), not a ruling of yours; end with your own")
    fits = [(b, r) for b in own if (r := _one(b, text, model)).answer is not None]
    if len({_canonical(b.group(2)) for b, _ in fits}) > 1:
        return Read(None, text.strip(), f"the answer holds {len(fits)} different rulings "
                    "(```json blocks that each fit); end with exactly one")
    return fits[-1][1] if fits else _one(own[-1], text, model)


def _one(last: re.Match[str], text: str, model: type[_Answer]) -> Read:
    """One block of ``text`` read as ``model``, the rest of the text its prose."""
    prose = (text[:last.start()] + text[last.end():]).strip()
    try:
        data = json.loads(last.group(2))
    except ValueError as exc:
        return Read(None, prose, f"the ```json block is not valid JSON: {exc}")
    if not isinstance(data, dict):
        return Read(None, prose, "the ```json block must hold one JSON object")
    try:
        return Read(model.model_validate(data), prose)
    except ValidationError as exc:
        return Read(None, prose, describe(exc))


def _canonical(block: str) -> str | None:
    """A block's data written one way (key order and spacing aside); None if it is no JSON."""
    try:
        return json.dumps(json.loads(block), sort_keys=True)
    except ValueError:
        return None


def describe(exc: ValidationError, most: int = 6) -> str:
    """Validation errors as a judge can act on them: where, and what is wrong."""
    parts = []
    for err in exc.errors()[:most]:
        where = ".".join(str(x) for x in err["loc"]) or "the object"
        parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    more = len(exc.errors()) - most
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


# --- the verdict --------------------------------------------------------------------------

@dataclass(frozen=True)
class Cast:
    """One juror's vote on one point, as counted."""

    juror: str
    weight: float
    ruling: str
    severity: str | None
    reasons: str


@dataclass(frozen=True)
class Seat:
    """A juror's part in one ruling: its answer, or why it gave none (``failed``: the turn
    failed; ``unreadable``: it answered twice without a readable block)."""

    juror: str
    weight: float = 1.0
    answer: Answer | Ballot | None = None
    failure: str | None = None


@dataclass
class Point:
    """One contested point as decided: the ruling the votes make (or ``tied``/``split``),
    the margin between the two heaviest rulings, and who dissented, with their reasons."""

    finding: Finding
    ruling: str
    severity: str
    votes: list[Cast]
    margin: float
    dissent: list[Cast]
    abstained: list[str]

    @property
    def decided(self) -> bool:
        return self.ruling in ("upheld", "rejected")

    @property
    def fingerprint(self) -> str:
        """Stable across debates for the same point at the same place (for CI annotations)."""
        key = f"{self.finding.file or ''}\n{' '.join(self.finding.point.lower().split())}"
        return hashlib.sha256(key.encode()).hexdigest()[:16]


@dataclass
class Judgment:
    """A ruling's verdict, computed from the structure. ``legacy``: a ruling from before the
    structure (its status read from its first line)."""

    status: str
    points: list[Point] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    agreements: list[str] = field(default_factory=list)
    summary: str = ""
    prose: str = ""
    new_ground: bool = False
    seats: list[Seat] = field(default_factory=list)
    error: str | None = None
    legacy: bool = False

    @property
    def blocking(self) -> list[str]:
        return [p.finding.id for p in self.points
                if p.ruling == "upheld" and p.severity == "blocking"]

    @property
    def undecided(self) -> list[str]:
        return [p.finding.id for p in self.points if not p.decided]

    @property
    def ruled(self) -> list[str]:
        """The judges who ruled (a legacy ruling's judge did, in its own words)."""
        return [s.juror for s in self.seats if s.answer is not None or self.legacy]


def unclear(prose: str, error: str, seats: list[Seat] | None = None) -> Judgment:
    return Judgment(UNCLEAR, prose=prose, error=error, seats=seats or [])


def judge(seats: list[Seat], prose: str = "") -> Judgment:
    """The verdict of one ruling: the first seat is the judge, whose findings fix the points
    (and whose answer must exist); the others are jurors ruling on the same points."""
    clerk = seats[0].answer
    assert isinstance(clerk, Answer)
    ruled = [s for s in seats if s.answer is not None]
    points = [_decide(f, ruled) for f in clerk.findings]
    # status: a weighted vote; a tie asks the human rather than calling it resolved
    asking = sum(s.weight for s in ruled if s.answer and s.answer.status == "needs_input")
    settled = sum(s.weight for s in ruled if s.answer and s.answer.status == "resolved")
    asks = asking > 0 and asking >= settled
    questions = _unique(q for s in ruled if asks and s.answer and
                        s.answer.status == "needs_input" for q in s.answer.questions)
    for p in points:
        if p.severity == "blocking" and not p.decided:
            how = "left open" if p.ruling == "open" else f"{p.ruling} ({_tally(p.votes)})"
            questions.append(f"{p.finding.id} (blocking) was {how}: {p.finding.point} — "
                             "how should it be decided?")
    status = NEEDS_INPUT if questions else RESOLVED
    return Judgment(status, points, questions, list(clerk.agreements), clerk.summary, prose,
                    clerk.new_ground, list(seats))


def _decide(finding: Finding, ruled: list[Seat]) -> Point:
    votes, abstained = [], []
    for s in ruled:
        assert s.answer is not None
        vote = next((v for v in s.answer.findings if v.id == finding.id), None)
        if vote is None:
            abstained.append(s.juror)
            continue
        votes.append(Cast(s.juror, s.weight, vote.ruling, vote.severity, vote.reasons))
    weights = _weights((c.ruling for c in votes), votes)
    ranked = sorted(weights.items(), key=lambda kv: (-kv[1], RULINGS.index(kv[0])))
    total = sum(weights.values())
    top, top_w = ranked[0] if ranked else ("open", 0.0)
    second_w = ranked[1][1] if len(ranked) > 1 else 0.0
    if not votes:
        ruling = "open"
    elif len(ranked) > 1 and top_w == second_w:
        ruling = TIED
    elif top_w * 2 > total:
        ruling = top
    else:
        ruling = SPLIT   # the heaviest ruling has no majority
    dissent = [c for c in votes if c.ruling != ruling] if ruling in RULINGS else []
    return Point(finding, ruling, _severity(finding, votes), votes, top_w - second_w,
                 dissent, abstained)


def _severity(finding: Finding, votes: list[Cast]) -> str:
    """The weighted majority of the severities given; a tie is read as the graver, so a tie
    never turns a blocking point into a lesser one."""
    weights = _weights((c.severity for c in votes if c.severity),
                       [c for c in votes if c.severity])
    if not weights:
        return finding.severity
    best = max(weights.values())
    return min((s for s, w in weights.items() if w == best), key=SEVERITIES.index)


def _weights(keys, votes: list[Cast]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, c in zip(keys, votes, strict=True):
        out[key] = out.get(key, 0.0) + c.weight
    return out


def _tally(votes: list[Cast]) -> str:
    weights = _weights((c.ruling for c in votes), votes)
    return ", ".join(f"{r} {_num(w)}" for r, w in sorted(weights.items(),
                                                         key=lambda kv: RULINGS.index(kv[0])))


def _num(w: float) -> str:
    return f"{w:g}"


def _unique(items) -> list[str]:
    seen: dict[str, None] = {}
    for q in items:
        if q.strip():
            seen.setdefault(" ".join(q.split()), None)
    return list(seen)
