"""The debate lineup: YAML validated by pydantic, with errors as one ``path:line: what`` line.

Precedence: ``--config PATH`` > ``$XDG_CONFIG_HOME/disputatio/config.yaml`` > built-in lineup;
CLI flags override file values. Disputatio's camelCase keys load too.
"""

from __future__ import annotations

import difflib
import os
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
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from disputatio import adapters, yamlfile

ADAPTERS = adapters.names()  # the registry's; an adapter's facts come from adapters.get
_CAMEL = {"timeoutMinutes": "timeout_minutes", "maxBudgetUsd": "max_budget_usd",
          "extraArgs": "extra_args", "answerPath": "answer_path",
          "includeUncommitted": "include_uncommitted", "maxParallel": "max_parallel"}
# Minutes and dollars are finite and positive; YAML's .inf and .nan are refused.
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]


def _no_nul(v: str) -> str:
    if "\0" in v:
        raise ValueError("a command line cannot hold a NUL byte")
    return v


# A string that ends up on a CLI's command line: a NUL there fails only when the turn starts.
Arg = Annotated[str, AfterValidator(_no_nul)]
# YAML 1.1 reads a bare ``off`` as false: for a key whose value may be "off", that is what
# the user wrote (``fence: off``, ``recusal: off``), not a boolean put in the wrong place.
Off = BeforeValidator(lambda v: "off" if v is False else v)


class ConfigError(Exception):
    """A config problem, already formatted as one ``path:line: message`` line."""


class _At(ValueError):
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


_COUNT, _LIST = "jury-count", "jury-list"   # which form of ``jury:`` (not shown in errors)


def _jury_kind(v: Any) -> str:
    return _LIST if isinstance(v, list) else _COUNT


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
    jury: Annotated[Annotated[int, Field(ge=2, le=9), Tag(_COUNT)]
                    | Annotated[list[Juror], Field(min_length=1, max_length=8), Tag(_LIST)],
                    Discriminator(_jury_kind)] | None = None

    # the file and the line of each key it was read from: the protocol's settings are checked
    # only when the debate starts, and their errors still name a line
    _source: tuple[str, dict[tuple, int]] | None = PrivateAttr(default=None)

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
                raise _At(("synthesizer",), "a synthesizer drafts the report from the judge's "
                          "ruling, and there is no judge; add 'judge:' or drop 'synthesizer:'")
            if self.jury is not None:
                raise _At(("jury",), "a jury rules with the judge, and there is no judge; add "
                          "'judge:' or drop 'jury:'")
            return self
        judge = self.judge.name or "judge"
        if judge in names:
            raise _At(("judge",), f"the judge's name '{judge}' is also a participant's; rename "
                      "one (judge: name: ...)")
        if self.synthesizer is not None:
            synth = self.synthesizer.name or "synthesizer"
            same = {p.display: p for p in self.participants}.get(synth)
            if (same is not None and same != self.synthesizer) or (
                    synth == judge and self.synthesizer != self.judge):
                raise _At(("synthesizer",), f"the synthesizer's name '{synth}' is already "
                          "taken; give it its own (synthesizer: name: ...)")
        taken = names | {judge, self.synthesizer.name or "synthesizer"
                         if self.synthesizer is not None else judge}
        for i, (name, _, _) in enumerate(self.jurors()):
            if name in taken:
                raise _At(("jury", i) if isinstance(self.jury, list) else ("jury",),
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


BUILTIN = {
    "participants": [{"adapter": "claude"}, {"adapter": "codex"}],
    "judge": {"adapter": "claude", "name": "judge"},
}

DEMO = {
    "rounds": 1,
    "timeout_minutes": 1,
    "participants": [
        {"adapter": "simulated", "name": "advocate", "model": "advocate"},
        {"adapter": "simulated", "name": "skeptic", "model": "skeptic"},
        {"adapter": "simulated", "name": "pragmatist", "model": "pragmatist"},
    ],
    "judge": {"adapter": "simulated", "name": "judge", "model": "judge"},
}


def user_config_path() -> Path:
    from platformdirs import user_config_path as ucp

    return ucp("disputatio", appauthor=False, roaming=False) / "config.yaml"


def load(path: Path | None, *, demo: bool = False) -> tuple[DebateConfig, str]:
    """The lineup and where it came from ('built-in', 'demo' or a file path)."""
    if demo:
        return DebateConfig.model_validate(DEMO), "demo"
    if path is not None:   # a pipe (--config <(...)) is read like a file
        if not path.exists():
            raise ConfigError(f"{path}: config file not found")
        return parse_file(path), str(path)
    user = user_config_path()
    if user.exists():
        return parse_file(user), str(user)
    return DebateConfig.model_validate(BUILTIN), "built-in"


def parse_file(path: Path) -> DebateConfig:
    if path.is_dir():
        raise ConfigError(f"{path}: is a directory, not a config file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_text(text, str(path))


def parse_text(text: str, where: str) -> DebateConfig:
    """Validate a lineup; the first problem by line becomes the ConfigError. Nothing YAML
    would silently misread passes: duplicate keys, aliases that explode, wrong types."""
    try:
        data, lines = yamlfile.read(text, rename=lambda k: _CAMEL.get(k, k), verbatim=("env",))
    except yamlfile.YamlError as exc:
        at = f":{exc.line}" if exc.line else ""
        raise ConfigError(f"{where}{at}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where}:1: expected a mapping of settings at the top level")
    data = _normalise_keys(data)
    problems = sorted(_unrunnable(data, lines))   # needs no valid file, so it is ordered too
    try:
        cfg = DebateConfig.model_validate(data)
    except ValidationError as exc:
        found = [(False, line, what) for line, what in problems]
        for err in exc.errors():
            located = (err.get("ctx") or {}).get("error")
            loc = located.loc if isinstance(located, _At) else \
                tuple(x for x in err["loc"] if x not in (_COUNT, _LIST))
            # a missing key is on no line: it is reported only when nothing else is wrong
            found.append((err["type"] == "missing", _line_for(lines, loc),
                          _describe(err, loc)))
        _, line, what = min(found, key=lambda f: f[:2])   # the first of equal lines wins
        raise ConfigError(f"{where}:{line}: {what}") from None
    if problems:
        line, what = problems[0]
        raise ConfigError(f"{where}:{line}: {what}")
    cfg._source = (where, lines)
    return cfg


def _unrunnable(data: dict, lines: dict[tuple, int]) -> list[tuple[int, str]]:
    """A ``bin`` (or a command's ``argv[0]``) that exists but cannot be run: say so here, with
    its line, rather than later as "not installed". A path that does not exist is left to the
    preflight, which also covers the CLIs found on PATH. Reads the raw mapping, so that it
    also runs when something else in the file is wrong."""
    people = data.get("participants")
    entries: list[tuple[tuple[str | int, ...], Any]] = \
        [(("participants", i), p) for i, p in enumerate(people)] \
        if isinstance(people, list) else []
    entries += [((role,), data.get(role)) for role in ("judge", "synthesizer")]
    jury = data.get("jury")
    entries += [(("jury", i), j) for i, j in enumerate(jury)] if isinstance(jury, list) else []
    out = []
    for at, p in entries:
        if not isinstance(p, dict):
            continue
        argv = p.get("argv") if isinstance(p.get("argv"), list) else [""]
        key, path = (("bin",), p["bin"]) if p.get("bin") else (("argv", 0), (argv or [""])[0])
        if not isinstance(path, str) or "/" not in path:
            continue
        target = Path(path).expanduser()
        what = "is a directory" if target.is_dir() else "is not executable" \
            if target.exists() and not os.access(target, os.X_OK) else None
        if what:
            dotted = ".".join(str(k) for k in at + key)
            out.append((_line_for(lines, at + key), f"{dotted}: '{path}' {what}"))
    return out


def _describe(err: ErrorDetails, loc: tuple) -> str:
    kind = err["type"]
    msg = re.sub(r"^Value error, ", "", err["msg"])
    if loc and loc[-1] == "[key]":  # a mapping's key (an env name) is what is wrong
        parent = ".".join(str(p) for p in loc[:-2])
        return f"{parent + ': ' if parent else ''}key {loc[-2]!r}: {msg}"
    dotted = ".".join(str(p) for p in loc)
    if kind == "extra_forbidden":
        key = str(loc[-1])
        model = Juror if len(loc) >= 3 and loc[0] == "jury" else \
            Participant if len(loc) >= 2 and loc[0] in ("participants", "judge",
                                                           "synthesizer") else DebateConfig
        known = list(model.model_fields)
        known += [c for c, snake in _CAMEL.items() if snake in model.model_fields]
        hint = difflib.get_close_matches(key, known, n=1)
        extra = f" (did you mean '{hint[0]}'?)" if hint else ""
        return f"unknown key '{dotted}'{extra}"
    if kind == "missing":
        return f"missing required key '{dotted}'"
    if kind in ("int_type", "float_type", "bool_type", "string_type") and \
            err.get("input") is not None:
        msg += f", not {_yaml_spelling(err['input'])}"
    return f"{dotted}: {msg}" if dotted else msg


def _yaml_spelling(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return repr(value)


def _normalise_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {(_CAMEL.get(k, k) if isinstance(k, str) else k): (
            v if k == "env" else _normalise_keys(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise_keys(v) for v in value]
    return value


def _line_for(lines: dict[tuple, int], loc: tuple) -> int:
    return yamlfile.line_for(lines, loc[:-1] if loc and loc[-1] == "[key]" else loc)


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


# The judges, recusal and the lineup warnings live in judges.py; their names stay here.
from disputatio.judges import (  # noqa: E402, F401
    conflicts,
    judges,
    jury_record,
    lineup_warnings,
    recusal_record,
    recused,
)
