"""The debate lineup: YAML validated by pydantic, with errors as one ``path:line: what`` line.

Precedence: ``--config PATH`` > ``$XDG_CONFIG_HOME/disputatio/config.yaml`` > built-in lineup;
CLI flags override file values. Disputatio's camelCase keys load too.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

ADAPTERS = ("claude", "codex", "gemini", "copilot", "pi", "agy", "command", "simulated")
VENDORS = {
    "claude": "Anthropic", "codex": "OpenAI", "gemini": "Google", "copilot": "GitHub",
    "pi": "pi", "agy": "Google", "command": "custom", "simulated": "simulated",
}
_CAMEL = {"timeoutMinutes": "timeout_minutes", "maxBudgetUsd": "max_budget_usd",
          "extraArgs": "extra_args", "answerPath": "answer_path",
          "includeUncommitted": "include_uncommitted"}


class ConfigError(Exception):
    """A config problem, already formatted as one ``path:line: message`` line."""


class Participant(BaseModel):
    model_config = ConfigDict(extra="forbid")

    adapter: str
    name: str | None = None
    model: str | None = None
    effort: str | None = None
    bin: str | None = None
    max_budget_usd: float | None = Field(default=None, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    extra_args: list[str] = Field(default_factory=list)
    # the ``command`` adapter only
    argv: list[str] | None = None
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

    @field_validator("env", mode="before")
    @classmethod
    def _env_strings(cls, v: Any) -> Any:
        """YAML gives numbers and booleans; an environment holds strings as a shell would."""
        if isinstance(v, dict):
            def text(x: Any) -> str:
                if x is None:
                    return ""
                if isinstance(x, bool):
                    return "true" if x else "false"
                return str(x)
            return {str(k): text(x) for k, x in v.items()}
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
        return VENDORS[self.adapter]

    def options(self) -> dict[str, Any]:
        return {k: v for k, v in (("argv", self.argv), ("output", self.output),
                                  ("answer_path", self.answer_path)) if v is not None}


class DebateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(default=1, ge=0, le=20)
    timeout_minutes: float = Field(default=10.0, gt=0)
    repo: str | None = None
    include_uncommitted: bool = False
    participants: list[Participant]
    judge: Participant
    synthesizer: Participant | None = None

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
        judge = self.judge.name or "judge"
        if judge in names:
            raise ValueError(f"the judge's name '{judge}' is also a participant's; rename one "
                             "(judge: name: ...)")
        if self.synthesizer is not None:
            synth = self.synthesizer.name or "synthesizer"
            same = {p.display: p for p in self.participants}.get(synth)
            if (same is not None and same != self.synthesizer) or (
                    synth == judge and self.synthesizer != self.judge):
                raise ValueError(f"the synthesizer's name '{synth}' is already taken; give it "
                                 "its own (synthesizer: name: ...)")
        return self


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
    if path is not None:
        if not path.is_file():
            raise ConfigError(f"{path}: config file not found")
        return parse_file(path), str(path)
    user = user_config_path()
    if user.is_file():
        return parse_file(user), str(user)
    return DebateConfig.model_validate(BUILTIN), "built-in"


def parse_file(path: Path) -> DebateConfig:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_text(text, str(path))


def parse_text(text: str, where: str) -> DebateConfig:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{where}{line}: invalid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where}:1: expected a mapping of settings at the top level")
    lines = _line_index(node)
    data = _normalise_keys(data)
    try:
        return DebateConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        line = _line_for(lines, loc)
        raise ConfigError(f"{where}:{line}: {_describe(err, loc)}") from None


def _describe(err: dict, loc: tuple) -> str:
    dotted = ".".join(str(p) for p in loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        key = str(loc[-1])
        model = Participant if len(loc) >= 2 and loc[0] in ("participants", "judge",
                                                           "synthesizer") else DebateConfig
        known = list(model.model_fields)
        known += [c for c, snake in _CAMEL.items() if snake in model.model_fields]
        hint = difflib.get_close_matches(key, known, n=1)
        extra = f" (did you mean '{hint[0]}'?)" if hint else ""
        return f"unknown key '{dotted}'{extra}"
    if kind == "missing":
        return f"missing required key '{dotted}'"
    msg = re.sub(r"^Value error, ", "", err["msg"])
    return f"{dotted}: {msg}" if dotted else msg


def _normalise_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {(_CAMEL.get(k, k) if isinstance(k, str) else k): (
            v if k == "env" else _normalise_keys(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise_keys(v) for v in value]
    return value


def _line_index(node: yaml.Node | None) -> dict[tuple, int]:
    """Map each key path (as pydantic reports it) to its 1-based line in the file."""
    out: dict[tuple, int] = {}

    def walk(n: yaml.Node, path: tuple) -> None:
        out[path] = n.start_mark.line + 1
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                key = _CAMEL.get(k.value, k.value)
                out[path + (key,)] = k.start_mark.line + 1
                walk(v, path + (key,))
                out[path + (key,)] = k.start_mark.line + 1
        elif isinstance(n, yaml.SequenceNode):
            for i, item in enumerate(n.value):
                walk(item, path + (i,))

    if node is not None:
        walk(node, ())
    return out


def _line_for(lines: dict[tuple, int], loc: tuple) -> int:
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in lines:
            return lines[loc[:cut]]
    return 1


def lineup_warnings(cfg: DebateConfig) -> list[str]:
    """Lineups that weaken a debate: shared vendors agree too easily, a judge who debated
    grades its own work. Warnings, not errors: the user may have reasons."""
    out = []
    real = [p for p in cfg.participants if p.adapter not in ("simulated", "command")]
    by_vendor: dict[str, list[str]] = {}
    for p in real:
        by_vendor.setdefault(p.vendor, []).append(p.display)
    for vendor, names in by_vendor.items():
        if len(names) > 1:
            out.append(f"participants {', '.join(names)} share a vendor ({vendor}); "
                       "their positions may converge")
    judge = cfg.judge
    same = [p.display for p in cfg.participants
            if (p.adapter, p.model, p.bin, p.argv) == (judge.adapter, judge.model, judge.bin,
                                                        judge.argv)
            and p.adapter != "simulated"]
    if same:
        out.append(f"the judge is the same CLI and model as debater {same[0]}; "
                   "it will rule on its own arguments")
    elif judge.adapter not in ("simulated", "command") and judge.vendor in by_vendor:
        out.append(f"the judge shares a vendor ({judge.vendor}) with "
                   f"{', '.join(by_vendor[judge.vendor])}")
    return out
