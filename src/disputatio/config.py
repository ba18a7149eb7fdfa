"""Where the lineup comes from, and its errors as one ``path:line: what`` line, the first by
line.

Precedence: ``--config PATH`` > ``$XDG_CONFIG_HOME/disputatio/config.yaml`` > built-in lineup;
CLI flags override file values. Disputatio's camelCase keys load too. The models (and the
cost cap's warnings) are in ``lineup``, the judges and their warnings in ``judges``; their
names stay here.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from disputatio import yamlfile
from disputatio.lineup import (  # noqa: F401  (the lineup's names, read through config)
    ADAPTERS,
    JURY_COUNT,
    JURY_LIST,
    AtKey,
    DebateConfig,
    Juror,
    Participant,
    Price,
    cost_warnings,
    jury_seats,
)

_CAMEL = {"timeoutMinutes": "timeout_minutes", "maxBudgetUsd": "max_budget_usd",
          "extraArgs": "extra_args", "answerPath": "answer_path",
          "includeUncommitted": "include_uncommitted", "maxParallel": "max_parallel"}


class ConfigError(Exception):
    """A config problem, already formatted as one ``path:line: message`` line."""


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
            loc = located.loc if isinstance(located, AtKey) else \
                tuple(x for x in err["loc"] if x not in (JURY_COUNT, JURY_LIST))
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


# The judges, recusal and the lineup warnings live in judges.py; their names stay here.
from disputatio.judges import (  # noqa: E402, F401
    conflicts,
    judges,
    jury_record,
    lineup_warnings,
    recusal_record,
    recused,
)
