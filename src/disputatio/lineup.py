"""The debate lineup as pydantic models (strict types): the participants, the judge, its jury,
the synthesizer, prices and the debate's settings, each refusing what YAML would misread;
the jurors' seats and the cost cap's warnings, read off a validated lineup.

``config`` reads a lineup into these models (and re-exports them); ``judges`` weighs its
judges.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    field_validator,
    model_validator,
)

from disputatio import adapters, yamlfile

ADAPTERS = adapters.names()  # the registry's; an adapter's facts come from adapters.get
# Minutes and dollars are finite and positive; YAML's .inf and .nan are refused.
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]


def _no_nul(v: str) -> str:
    if "\0" in v:
        raise ValueError("a command line cannot hold a NUL byte")
    return v


# A string that ends up on a CLI's command line: a NUL there fails only when the turn starts.
Arg = Annotated[str, AfterValidator(_no_nul)]
# For a key whose value may be "off" (``fence``, ``recusal``), ``false`` means it too; a bare
# ``off`` is the word itself (the lineup's booleans are YAML 1.2's: true and false only).
Off = BeforeValidator(lambda v: "off" if v is False else v)


class AtKey(ValueError):
    """A validation error that knows which key it is about, so its line can be given."""

    def __init__(self, loc: tuple, message: str):
        super().__init__(message)
        self.loc = loc


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _env_name(k: Any) -> str:
    if not isinstance(k, str) or not k:
        raise ValueError("an environment variable name must be a non-empty string")
    if "=" in k or "\0" in k:
        raise ValueError("an environment variable name cannot contain '=' or a NUL byte")
    return k


def _env_value(x: Any) -> str:
    """Numbers and booleans become strings as a shell would write them; lists and maps have
    no environment spelling, so they are refused rather than stringified."""
    if x is None:
        return ""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, str):
        if "\0" in x:
            raise ValueError("an environment value cannot contain a NUL byte")
        return x
    kind = "a list" if isinstance(x, (list, tuple)) else "a mapping" if isinstance(x, dict) \
        else type(x).__name__
    raise ValueError(f"an environment value must be a string, number or boolean, not {kind}")


class Participant(BaseModel):
    # strict: YAML's true is not a number and 1 is not a boolean; an int still fills a float
    model_config = ConfigDict(extra="forbid", strict=True)

    adapter: str
    name: str | None = None
    model: str | None = None
    effort: Arg | None = None
    bin: Arg | None = None
    max_budget_usd: Positive | None = None
    timeout_minutes: Positive | None = None   # this seat's own; default: the debate's
    env: dict[Annotated[str, BeforeValidator(_env_name)],
              Annotated[str, BeforeValidator(_env_value)]] = Field(default_factory=dict)
    extra_args: list[Arg] = Field(default_factory=list)
    # the ``command`` adapter only
    argv: list[Arg] | None = None
    output: Literal["text", "json"] | None = None
    answer_path: str | None = None

    @field_validator("adapter")
    @classmethod
    def _known_adapter(cls, v: str) -> str:
        if v not in ADAPTERS:
            hint = difflib.get_close_matches(v, ADAPTERS, n=1)
            extra = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise ValueError(f"unknown adapter '{v}'{extra}; known: {', '.join(ADAPTERS)}")
        return v

    @field_validator("name", "model")
    @classmethod
    def _printable(cls, v: str | None) -> str | None:
        """Names land in headings, prompts and the terminal: a line break or an escape in one
        would open a section there or drive the terminal."""
        if v is not None and _CONTROL.search(v):
            raise ValueError(f"{v!r} holds a control character (a line break, tab, escape or "
                             "NUL); use printable characters only")
        return v

    @model_validator(mode="after")
    def _command_needs_argv(self) -> Participant:
        if self.adapter == "command" and not self.argv:
            raise ValueError("the 'command' adapter needs 'argv' (the command line to run)")
        return self

    @property
    def display(self) -> str:
        return self.name or (f"{self.adapter}-{self.model}" if self.model else self.adapter)

    @property
    def vendor(self) -> str:
        return adapters.get(self.adapter).vendor

    @property
    def kind(self) -> str:
        """The adapter's kind (``adapters.KINDS``): whether a vendor and a model stand behind it."""
        return adapters.get(self.adapter).kind

    def options(self) -> dict[str, Any]:
        return {k: v for k, v in (("argv", self.argv), ("output", self.output),
                                  ("answer_path", self.answer_path)) if v is not None}


# which form of ``jury:`` (tags the loader leaves out of its errors)
JURY_COUNT, JURY_LIST = "jury-count", "jury-list"


def _jury_kind(v: Any) -> str:
    return JURY_LIST if isinstance(v, list) else JURY_COUNT


class Juror(Participant):
    """A judge of the jury besides the judge: an entry like any other, and the weight of its
    vote (the judge's weighs 1)."""

    weight: Positive = 1.0

    def entry(self) -> Participant:
        """The seat as lineup.json keeps it (the weight is recorded in the ledger)."""
        return Participant.model_validate(self.model_dump(exclude={"weight"}, exclude_none=True))


class Price(BaseModel):
    """What a model costs in USD per million tokens, for CLIs that report tokens but no cost
    (the cost cap counts their turns with it). Cached input defaults to the input price."""

    model_config = ConfigDict(extra="forbid", strict=True)

    input_per_mtok: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    output_per_mtok: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    cached_per_mtok: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None


class DebateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    rounds: int = Field(default=1, ge=0, le=20)
    timeout_minutes: Positive = 10.0
    max_parallel: int | None = Field(default=None, ge=1)   # agents at once; None: no limit
    repo: str | None = None
    include_uncommitted: bool = False
    sign: bool | str = False   # sign the ledger's head: true (the default SSH key) or a key path
    # the write fence around every agent: auto (when the machine has one), require, off;
    # unset: $DISPUTATIO_FENCE, else auto
    fence: Annotated[Literal["auto", "require", "off"] | None, Off] = None
    # the settings of the protocol the debate follows, checked by that protocol's own model
    # when the debate starts (the top-level rounds above stays a default for them)
    protocol: dict[str, Any] = Field(default_factory=dict)
    # a judge sharing a vendor (or its model) with a debater does not rule when another judge
    # of the lineup has no such conflict: vendor, model or off
    recusal: Annotated[Literal["vendor", "model", "off"], Off] = "vendor"
    participants: list[Participant]
    judge: Participant | None = None   # none: the debate ends after the reactions
    synthesizer: Participant | None = None
    # the debate-wide cost cap in USD, checked before every step (--max-cost)
    max_cost_usd: Positive | None = None
    # prices by model name (or by adapter name, for entries that name no model)
    prices: dict[str, Price] = Field(default_factory=dict)
    # more judges ruling on the judge's points: N judges in all (the judge's entry sitting N
    # times, each in its own session), or the entries that rule besides the judge
    jury: Annotated[Annotated[int, Field(ge=2, le=9), Tag(JURY_COUNT)]
                    | Annotated[list[Juror], Field(min_length=1, max_length=8), Tag(JURY_LIST)],
                    Discriminator(_jury_kind)] | None = None

    # the file and the line of each key it was read from: the protocol's settings are checked
    # only when the debate starts, and their errors still name a line
    _source: tuple[str, dict[tuple, int]] | None = PrivateAttr(default=None)

    def source_file(self) -> Path | None:
        """The regular file this lineup was read from, absolute (None: built-in, the demo, a
        pipe): it holds every participant's env values, so agents must read it as empty."""
        if self._source is None:
            return None
        path = Path(self._source[0])
        return path.resolve() if path.is_file() else None

    def place(self, *key: str | int) -> str:
        """``path:line: `` of a key of the lineup file ('' for a lineup read from no file)."""
        if self._source is None:
            return ""
        where, lines = self._source
        return f"{where}:{yamlfile.line_for(lines, key)}: "

    @field_validator("participants")
    @classmethod
    def _lineup(cls, v: list[Participant]) -> list[Participant]:
        if len(v) < 2:
            raise ValueError(f"a debate needs at least two participants, got {len(v)}")
        seen: set[str] = set()
        for p in v:
            if p.display in seen:
                raise ValueError(f"duplicate participant name '{p.display}'; give each a 'name'")
            seen.add(p.display)
        return v

    @model_validator(mode="after")
    def _roles_have_their_own_names(self) -> DebateConfig:
        """Seats are found by name: a debater called like the judge would be replaced by it."""
        names = {p.display for p in self.participants}
        if self.judge is None:
            if self.synthesizer is not None:
                raise AtKey(("synthesizer",), "a synthesizer drafts the report from the judge's "
                          "ruling, and there is no judge; add 'judge:' or drop 'synthesizer:'")
            if self.jury is not None:
                raise AtKey(("jury",), "a jury rules with the judge, and there is no judge; add "
                          "'judge:' or drop 'jury:'")
            return self
        judge = self.judge.name or "judge"
        if judge in names:
            raise AtKey(("judge",), f"the judge's name '{judge}' is also a participant's; rename "
                      "one (judge: name: ...)")
        if self.synthesizer is not None:
            synth = self.synthesizer.name or "synthesizer"
            same = {p.display: p for p in self.participants}.get(synth)
            if (same is not None and same != self.synthesizer) or (
                    synth == judge and self.synthesizer != self.judge):
                raise AtKey(("synthesizer",), f"the synthesizer's name '{synth}' is already "
                          "taken; give it its own (synthesizer: name: ...)")
        taken = names | {judge, self.synthesizer.name or "synthesizer"
                         if self.synthesizer is not None else judge}
        for i, (name, _, _) in enumerate(self.jurors()):
            if name in taken:
                raise AtKey(("jury", i) if isinstance(self.jury, list) else ("jury",),
                          f"the juror's name '{name}' is already taken; give each juror its "
                          "own (jury: - name: ...)")
            taken.add(name)
        return self

    def jurors(self) -> list[tuple[str, Participant, float]]:
        """The judges besides the judge, in order: name, entry, weight."""
        if self.judge is None or self.jury is None:
            return []
        judge = self.judge.name or "judge"
        if isinstance(self.jury, int):
            return [(f"{judge}-{i}", self.judge.model_copy(update={"name": f"{judge}-{i}"}), 1.0)
                    for i in range(2, self.jury + 1)]
        out = []
        for j in self.jury:
            name = j.name or f"juror-{j.display}"
            out.append((name, j.entry().model_copy(update={"name": name}), j.weight))
        return out


def jury_seats(cfg: DebateConfig) -> dict[str, Participant]:
    """The jurors' entries as lineup.json keeps them, under ``seats``."""
    return {f"juror-{i}": p for i, (_, p, _) in enumerate(cfg.jurors(), start=1)}


def cost_warnings(cfg: DebateConfig) -> list[str]:
    """With a cost cap: the seats whose spend it cannot see, each once."""
    if cfg.max_cost_usd is None:
        return []
    from disputatio import costs

    seats = {p.display: p for p in [*cfg.participants, *[p for p in (cfg.judge, cfg.synthesizer)
                                                          if p is not None],
                                    *jury_seats(cfg).values()]}
    return costs.unenforceable(seats.values(),
                               {k: v.model_dump() for k, v in cfg.prices.items()})
