"""The ledger's events, each defined once: its type, its fields and what they mean.

Every writer (the engine, the use cases) builds one of these models and appends ``to_data()``;
every reader (a protocol's state, the renderers) reads them through ``parse``/``typed``. Adding a
field is one edit here.

Pydantic rather than plain dataclasses because reading is where a ledger can surprise us (a file
from another version, or edited by hand): a field of the wrong type is refused with its name and
the event's seq, instead of failing later deep inside a renderer. Three rules keep old and new
ledgers readable and the hash chain stable:

- **Older ledgers load.** Fields that every reader needs are required; every other field has a
  default that means "not recorded", so a ledger written before a field existed (no ``raw_stem``,
  no ``fence``) loads, replays and renders.
- **Newer ledgers load.** A field this version does not know is kept (``model_extra``) and
  ignored; an event type it does not know is skipped by the readers. Only writers are held to
  the declared fields: a misspelt keyword is an error, not a new field.
- **The bytes do not drift.** ``to_data`` writes every declared field, ``None`` included, except
  the ones listed in ``OMITTED_WHEN_NONE`` (fields that are written only when they say
  something, such as ``fence_reason``). Numbers keep their JSON type (``600`` stays ``600``, not
  ``600.0``), because the chain hashes the canonical JSON of ``data``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, model_validator

from disputatio.ledger import TEXT_DIGEST, text_digest

# int | float, in that order: a whole number stays an int (a plain ``float`` field would write
# 600 back as 600.0 and change the event's hash)
Number = int | float

_READING = "reading a ledger"


class EventError(ValueError):
    """A ledger event this version cannot read: one line naming its seq, type and field."""


class EventData(BaseModel):
    """The ``data`` of one ledger event; subclasses name their ``TYPE``."""

    model_config = ConfigDict(extra="allow", frozen=True)

    TYPE: ClassVar[str] = ""
    WHEN: ClassVar[str] = ""   # when the event is written (docs/architecture.md shows it)
    OMITTED_WHEN_NONE: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _declared_fields_only_when_written(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict) and (info.context or {}).get(_READING) is not True:
            unknown = sorted(set(data) - set(cls.model_fields))
            if unknown:
                raise ValueError(f"{cls.TYPE} has no field {', '.join(unknown)}")
        return data

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Self:
        """The event as read from a ledger: unknown fields kept, wrong types refused."""
        return cls.model_validate(data, context={_READING: True})

    def to_data(self) -> dict[str, Any]:
        """The ``data`` a writer appends."""
        return {k: v for k, v in self.model_dump().items()
                if v is not None or k not in self.OMITTED_WHEN_NONE}


class Fenced(EventData):
    """Written by every command that runs agents: the write fence they ran in."""

    OMITTED_WHEN_NONE = frozenset({"fence", "fence_reason", "max_cost_usd"})

    fence: str | None = Field(None, description="'bwrap 0.8.0' or 'none' (None: a ledger "
                              "from before the write fence)")
    fence_reason: str | None = Field(None, description="why there is no fence (only when none)")
    max_cost_usd: Number | None = Field(None, description="the debate-wide cost cap this "
                                        "command set (only when set; the last one stands)")


class DebateStarted(Fenced):
    TYPE = "debate_started"
    WHEN = "a new debate, first event"
    OMITTED_WHEN_NONE = Fenced.OMITTED_WHEN_NONE | {"settings", "human", "labels", "seed",
                                                    "recusal", "jury", "prices", "review",
                                                    "config_file"}

    quaestio: str = Field(description="the question, as the user gave it")
    protocol: str = Field("disputatio", description="the protocol's name (protocols.KNOWN)")
    version: str | None = Field(None, description="disputatio's version")
    rounds: int = Field(description="reaction rounds after the proposals")
    timeout_s: Number | None = Field(None, description="per-turn timeout for seats without "
                                     "their own timeout_minutes")
    max_parallel: int | None = Field(None, description="agents running at once (None: all)")
    budget_usd: Number | None = Field(None, description="spend cap for judge and synthesizer")
    repo: str | None = Field(None, description="the user's repository, absolute")
    include_uncommitted: bool = Field(False, description="the working tree's changes too")
    snapshot: str | None = Field(None, description="the commit the checkouts were made from")
    participants: list[str] = Field(description="debaters' names, in lineup order")
    judge: str | None = Field(None, description="the judge's name (None: no judge)")
    synthesizer: str | None = Field(None, description="who drafts the report")
    lineup: dict[str, dict[str, Any]] = Field(default_factory=dict, description="each "
                                              "debater's config, env values redacted")
    seats: dict[str, dict[str, Any] | None] = Field(
        default_factory=dict, description="judge and synthesizer configs, redacted")
    lineup_file: str | None = Field(None, description="the file with the full lineup "
                                    "(env values included) that --resume runs")
    lineup_sha256: str | None = Field(None, description="its sha256 when the debate started")
    config_file: str | None = Field(None, description="the lineup file the debate was started "
                                    "from (--config), absolute; its agents read it as empty")
    settings: dict[str, Any] | None = Field(None, description="the protocol's own settings "
                                            "beyond rounds (only when it has some)")
    human: bool | None = Field(None, description="a human in the loop (--human): the protocol "
                               "asks them between rounds (only when true)")
    labels: dict[str, str] | None = Field(None, description="each debater's neutral label "
                                          "in prompts (Participant A, ...); None: a ledger "
                                          "from before labels (lineup order)")
    seed: int | None = Field(None, description="seeds the order each judge reads answers in")
    jury: list[dict[str, Any]] | None = Field(None, description="the judges who rule besides "
                                              "the judge, in order: name, weight (only with a "
                                              "jury; their entries are seats.juror-N)")
    recusal: dict[str, Any] | None = Field(None, description="judges and bias: mode (vendor, "
                                           "model, off), conflicts {judge: [debaters]}, "
                                           "recused [judges who do not rule]")
    prices: dict[str, dict[str, Any]] | None = Field(
        None, description="USD per million tokens by model (or adapter): input_per_mtok, "
        "output_per_mtok, cached_per_mtok (only when configured)")
    review: dict[str, Any] | None = Field(None, description="a review's settings (disputatio "
                                          "review only): change (mode, base, head, files), "
                                          "fail_on, fail_open; resume ends it as a review")


class TurnFields(EventData):
    """Who takes a turn, in which phase and round: shared by a turn's start and its end."""

    turn_id: str = Field(description="e.g. proposal/<name>, reaction-1/<name>, respondeo-1")
    role: str = Field(description="the participant's name (or the judge's, the synthesizer's)")
    seat: str = Field("", description="participant, judge or synthesizer")
    phase: str = Field(description="proposal, reaction, respondeo, redactio")
    round: int = Field(description="the reaction round, the ruling's k; 0 for proposals")
    adapter: str = Field("", description="the CLI's adapter (claude, codex, ...)")
    model: str | None = Field(None, description="the model asked for, if any")

    @property
    def participant(self) -> str:
        """Who took the turn. The ledger keeps it under ``role`` and the kind of role under
        ``seat`` (names from before they were told apart; the bytes stay as written)."""
        return self.role


class TurnStarted(TurnFields):
    TYPE = "turn_started"
    WHEN = "a turn's prompt is ready, before its CLI runs"

    prompt_bytes: int | None = Field(None, description="the prompt's size in bytes")
    prompt_sha256: str | None = Field(None, description="the prompt's sha256")
    argv: list[str] = Field(default_factory=list, description="the command line, prompt and "
                            "secrets redacted")


class TurnEnded(TurnFields):
    """What a turn produced: the answer, or one failure kind with a one-line message."""

    OMITTED_WHEN_NONE = frozenset({"raw_stem", "text_cut_bytes", TEXT_DIGEST})
    FINISHED: ClassVar[bool] = True

    ok: bool = Field(description="an answer was given")
    text: str = Field("", description="the answer, sanitized, at most ANSWER_LIMIT characters")
    failure: str | None = Field(None, description="the failure kind (timeout, auth, ...)")
    message: str | None = Field("", description="the failure in one line")
    cost_usd: Number | None = Field(None, description="as the CLI reported it (None: unknown)")
    tokens: dict[str, int] = Field(default_factory=dict, description="input, output, cached, "
                                   "reasoning, as reported ({}: unknown)")
    evidence: dict[str, int] = Field(default_factory=dict, description="commands, tool_calls "
                                     "run ({}: not observable)")
    session_id: str | None = Field(None, description="the CLI's own session id")
    exit_code: int | None = Field(None, description="the process's exit code")
    signal: int | None = Field(None, description="the signal that ended it")
    duration_s: Number | None = Field(None, description="the CLI's run time")
    workspace_s: Number | None = Field(None, description="time spent waiting for the checkout")
    cli_version: str | None = Field(None, description="the CLI's --version")
    raw: list[str] = Field(default_factory=list, description="file names of the output in raw/")
    raw_stem: str | None = Field(None, description="<seq>-<turn id>: the prefix of the turn's "
                                 "raw/ files (None: a ledger from before it)")
    text_cut_bytes: int | None = Field(None, description="bytes of the answer left out of "
                                       "text (only when it was cut)")
    text_sha256: str | None = Field(None, description="sha256 of text: the hash chain covers "
                                    "the answer through it, so a redaction can remove the text "
                                    "(None: a ledger from before it)")

    @model_validator(mode="before")
    @classmethod
    def _digest_when_written(cls, data: Any, info: ValidationInfo) -> Any:
        """A writer never gives the digest: it is always the digest of the text written."""
        if isinstance(data, dict) and (info.context or {}).get(_READING) is not True:
            data = {**data, TEXT_DIGEST: text_digest(str(data.get("text", "")))}
        return data

    @property
    def finished(self) -> bool:
        """False for a turn cut short: it re-runs on resume and counts as not done."""
        return self.FINISHED


class TurnCompleted(TurnEnded):
    TYPE = "turn_completed"
    WHEN = "a turn ended, answered or failed"


class TurnInterrupted(TurnEnded):
    TYPE = "turn_interrupted"
    WHEN = "a turn cut short by Ctrl-C or SIGTERM (it re-runs on resume)"
    FINISHED = False


class AnswersGiven(Fenced):
    TYPE = "answers_given"
    WHEN = "`--continue`"

    answers: str = Field(description="the human's answers to the judge's questions")


class FinalizeRequested(Fenced):
    TYPE = "finalize_requested"
    WHEN = "`--finalize`"


class HumanActed(EventData):
    TYPE = "human_acted"
    WHEN = "the human in the loop (--human) answered a protocol's question"
    OMITTED_WHEN_NONE = frozenset({"participant", "strength", "choice"})

    key: str = Field(description="which question, as the protocol asked it (e.g. round-2)")
    round: int = Field(0, description="the round it followed")
    action: str = Field(description="agree, skip, steer or pick")
    participant: str | None = Field(None, description="whom the human agrees with (agree)")
    strength: int | None = Field(None, description="how strongly, 1-3 (agree)")
    text: str = Field("", description="the steer, in the human's words (steer)")
    choice: str | None = Field(None, description="what the human picked (pick)")


class Resumed(Fenced):
    TYPE = "resumed"
    WHEN = "`--resume`"

    version: str | None = Field(None, description="disputatio's version")
    retry: list[str] = Field(default_factory=list, description="failed turns to run again")


class TurnRedacted(EventData):
    """A turn's text replaced by a tombstone (``disputatio redact``). The chain still covers the
    redacted event through its ``text_sha256``; this event vouches for the tombstone."""

    TYPE = "turn_redacted"
    WHEN = "`disputatio redact`: a turn's text was replaced by a tombstone"

    target: int = Field(description="the seq of the turn event whose text was replaced")
    turn_id: str = Field(description="that turn's id")
    removed_sha256: str = Field(description="the text_sha256 of the text removed (the "
                                "redacted event keeps it)")
    tombstone: str = Field(description="what the event's text is now: [REDACTED: reason]")
    reason: str = Field(description="why, in the words of who redacted it")
    by: str = Field(description="who redacted it: git's user.name <user.email>, else the OS user")


class Interrupted(EventData):
    TYPE = "interrupted"
    WHEN = "the command was stopped by a signal"

    reason: str = Field("", description="signal")


class CostCapped(EventData):
    TYPE = "cost_capped"
    WHEN = "the next step would take the debate past its cost cap (--max-cost): it did not run"

    cap_usd: Number = Field(description="the cap in force")
    spent_usd: Number = Field(description="what the debate's turns cost so far (known costs)")
    estimate_usd: Number = Field(description="what the step's turns would cost, estimated")
    phase: str = Field(description="the step's phase")
    turns: list[str] = Field(default_factory=list, description="the step's turn ids, not run")
    unestimated: list[str] = Field(default_factory=list, description="who in the step had no "
                                   "estimate (no cost reported, no price)")
    uncounted: list[str] = Field(default_factory=list, description="turns whose cost is "
                                 "unknown, left out of spent_usd")


class DebateEnded(EventData):
    TYPE = "debate_ended"
    WHEN = "the protocol had nothing left to run"

    status: str = Field(description="resolved, needs_input, unclear, debated, aborted, failed, "
                        "capped (the cost cap)")
    reason: str = Field("", description="why, in one sentence (may be empty)")
    cleanup_s: Number | None = Field(None, description="time spent removing the checkouts")


ALL: tuple[type[EventData], ...] = (
    DebateStarted, TurnStarted, TurnCompleted, TurnInterrupted, AnswersGiven, FinalizeRequested,
    HumanActed, Resumed, TurnRedacted, Interrupted, CostCapped, DebateEnded)
BY_TYPE: dict[str, type[EventData]] = {cls.TYPE: cls for cls in ALL}


def parse(event: Any) -> EventData | None:
    """One ledger event (anything with ``type`` and ``data``) as its model; None for a type
    this version does not know (a newer one wrote it)."""
    cls = BY_TYPE.get(event.type)
    if cls is None:
        return None
    try:
        return cls.from_data(event.data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        seq = getattr(event, "seq", "?")
        raise EventError(f"seq {seq}: {event.type}" + (f": {where}" if where else "")
                         + f": {err['msg']}") from None


def typed(events: Iterable[Any]) -> Iterator[tuple[Any, EventData]]:
    """``(event, model)`` for every event of a known type, in ledger order."""
    for ev in events:
        model = parse(ev)
        if model is not None:
            yield ev, model


def started_event(events: Iterable[Any]) -> DebateStarted | None:
    """The debate's ``debate_started``, or None in a ledger without one."""
    for ev in events:
        if ev.type == DebateStarted.TYPE:
            model = parse(ev)
            assert isinstance(model, DebateStarted)
            return model
    return None
