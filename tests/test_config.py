import re
import time
from pathlib import Path

import pytest

from disputatio import config
from disputatio.config import ConfigError, parse_text

GOOD = """\
rounds: 2
timeout_minutes: 3
participants:
  - adapter: claude
    model: sonnet
  - adapter: codex
judge:
  adapter: claude
  name: judge
"""


def err(text: str) -> str:
    with pytest.raises(ConfigError) as exc:
        parse_text(text, "lineup.yaml")
    return str(exc.value)


def test_valid_file_loads():
    cfg = parse_text(GOOD, "lineup.yaml")
    assert cfg.rounds == 2 and cfg.timeout_minutes == 3
    assert [p.display for p in cfg.participants] == ["claude-sonnet", "codex"]


def test_camel_case_keys_load():
    cfg = parse_text("timeoutMinutes: 0.5\nparticipants:\n  - {adapter: claude, maxBudgetUsd: 2}"
                     "\n  - {adapter: codex, extraArgs: ['-c', 'x=1']}\njudge: {adapter: claude}\n",
                     "x.yaml")
    assert cfg.timeout_minutes == 0.5
    assert cfg.participants[0].max_budget_usd == 2
    assert cfg.participants[1].extra_args == ["-c", "x=1"]


def test_unknown_key_names_line_and_suggests():
    msg = err(GOOD.replace("    model: sonnet", "    modle: sonnet"))
    assert msg == "lineup.yaml:5: unknown key 'participants.0.modle' (did you mean 'model'?)"


def test_unknown_top_level_key():
    assert err("round: 2\n" + GOOD.split("\n", 1)[1]).startswith(
        "lineup.yaml:1: unknown key 'round' (did you mean 'rounds'?)")


def test_unknown_adapter_suggests():
    msg = err(GOOD.replace("adapter: codex", "adapter: codx"))
    assert msg.startswith("lineup.yaml:6: participants.1.adapter: unknown adapter 'codx' "
                          "(did you mean 'codex'?)")


def test_wrong_type_names_line():
    msg = err(GOOD.replace("rounds: 2", "rounds: many"))
    assert msg.startswith("lineup.yaml:1: rounds:")
    assert "integer" in msg


def test_fewer_than_two_participants():
    msg = err("participants:\n  - adapter: claude\njudge: {adapter: claude}\n")
    assert msg == "lineup.yaml:1: participants: a debate needs at least two participants, got 1"


def test_duplicate_names():
    msg = err("participants:\n  - adapter: claude\n  - adapter: claude\njudge: {adapter: codex}\n")
    assert "duplicate participant name 'claude'" in msg and msg.startswith("lineup.yaml:1:")


def test_the_judge_is_optional_but_a_synthesizer_needs_one():
    cfg = parse_text("participants:\n  - adapter: claude\n  - adapter: codex\n", "x.yaml")
    assert cfg.judge is None and cfg.synthesizer is None
    assert config.lineup_warnings(cfg) == []
    assert err("participants:\n  - adapter: claude\n  - adapter: codex\n"
               "synthesizer:\n  adapter: claude\n").startswith(
        "lineup.yaml:4: synthesizer: a synthesizer drafts the report from the judge's ruling")


def test_invalid_yaml_has_line():
    msg = err("rounds: 1\nparticipants: [\n")
    assert msg.startswith("lineup.yaml:3: invalid YAML")


def test_not_a_mapping():
    assert err("- a\n- b\n") == "lineup.yaml:1: expected a mapping of settings at the top level"


def test_command_adapter_needs_argv():
    msg = err("participants:\n  - adapter: command\n    name: x\n  - adapter: codex\n"
              "judge: {adapter: claude}\n")
    assert "needs 'argv'" in msg and msg.startswith("lineup.yaml:2:")


def test_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    cfg, source = config.load(None)
    assert source == "built-in" and [p.adapter for p in cfg.participants] == ["claude", "codex"]
    user = config.user_config_path()
    user.parent.mkdir(parents=True)
    user.write_text(GOOD.replace("rounds: 2", "rounds: 4"))
    cfg, source = config.load(None)
    assert source == str(user) and cfg.rounds == 4
    explicit = tmp_path / "mine.yaml"
    explicit.write_text(GOOD.replace("rounds: 2", "rounds: 0"))
    cfg, source = config.load(explicit)
    assert cfg.rounds == 0 and source == str(explicit)
    with pytest.raises(ConfigError, match="config file not found"):
        config.load(tmp_path / "missing.yaml")


def test_example_config_is_valid():
    example = Path(__file__).resolve().parents[1] / "examples" / "debate.yaml"
    cfg = config.parse_file(example)
    assert len(cfg.participants) >= 2


def test_a_debater_may_also_be_the_synthesizer_but_not_a_namesake():
    base = "participants:\n  - {adapter: claude, name: a}\n  - {adapter: codex, name: b}\n" \
           "judge: {adapter: gemini}\n"
    cfg = parse_text(base + "synthesizer: {adapter: claude, name: a}\n", "x.yaml")
    assert cfg.synthesizer.display == "a"
    assert "already taken" in err(base + "synthesizer: {adapter: pi, name: a}\n")


TWO = "participants:\n  - adapter: claude\n  - adapter: codex\n"


@pytest.mark.parametrize("text, line, dotted", [
    ("rounds: 1\n" + TWO + "participants:\n  - adapter: gemini\n  - adapter: pi\n", 5,
     "participants"),
    (TWO.replace("codex\n", "codex\n    model: a\n    model: b\n"), 5, "participants.1.model"),
    (TWO.replace("claude\n", "claude\n    env:\n      K: a\n      K: b\n"), 5,
     "participants.0.env.K"),
    ("timeout_minutes: 1\ntimeoutMinutes: 2\n" + TWO, 2, "timeout_minutes"),
])
def test_a_key_given_twice_is_refused_at_any_level(text, line, dotted):
    assert err(text).startswith(f"lineup.yaml:{line}: duplicate key '{dotted}' (first on line ")


@pytest.mark.parametrize("text, line, key", [
    ("rounds: true\n" + TWO, 1, "rounds"),
    ("max_parallel: true\n" + TWO, 1, "max_parallel"),
    ("timeout_minutes: false\n" + TWO, 1, "timeout_minutes"),
    ("include_uncommitted: 1\n" + TWO, 1, "include_uncommitted"),
    ("include_uncommitted: 'yes'\n" + TWO, 1, "include_uncommitted"),
    ("rounds: '2'\n" + TWO, 1, "rounds"),
    (TWO.replace("claude\n", "claude\n    max_budget_usd: true\n"), 3,
     "participants.0.max_budget_usd"),
])
def test_a_value_of_the_wrong_type_is_not_converted(text, line, key):
    assert err(text).startswith(f"lineup.yaml:{line}: {key}: Input should be a valid")


def test_an_int_still_fills_a_float():
    cfg = parse_text("timeout_minutes: 5\n" + TWO.replace(
        "claude\n", "claude\n    max_budget_usd: 3\n    timeout_minutes: 2\n"), "x.yaml")
    assert cfg.timeout_minutes == 5.0 and isinstance(cfg.timeout_minutes, float)
    assert cfg.participants[0].max_budget_usd == 3 and cfg.participants[0].timeout_minutes == 2


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", ".NaN", ".Inf"])
@pytest.mark.parametrize("where, line, key", [
    ("top", 1, "timeout_minutes"),
    ("claude", 3, "participants.0.max_budget_usd"),
    ("codex", 4, "participants.1.timeout_minutes"),
])
def test_non_finite_numbers_are_refused(value, where, line, key):
    if where == "top":
        text = f"timeout_minutes: {value}\n" + TWO
    else:
        field = key.rsplit(".", 1)[1]
        text = TWO.replace(f"{where}\n", f"{where}\n    {field}: {value}\n")
    msg = err(text)
    assert msg.startswith(f"lineup.yaml:{line}: {key}: "), msg
    assert "finite" in msg or "greater than 0" in msg


@pytest.mark.parametrize("value, kind", [("[a, b]", "a list"), ("{x: 1}", "a mapping"),
                                         ("\n        - a", "a list")])
def test_env_values_that_are_lists_or_maps_are_refused(value, kind):
    msg = err(TWO.replace("claude\n", f"claude\n    env:\n      OK: 1\n      BAD: {value}\n"))
    assert msg == ("lineup.yaml:5: participants.0.env.BAD: an environment value must be a "
                   f"string, number or boolean, not {kind}")


def test_env_numbers_and_booleans_become_strings_as_a_shell_would():
    cfg = parse_text(TWO.replace("claude\n", "claude\n    env: {A: 1, B: true, C: 1.5, "
                                 "D: null, E: no, F: text, G: On}\n"), "x.yaml")
    # yes, no, on and off are words, as YAML 1.2 reads them (and a shell passes them)
    assert cfg.participants[0].env == {"A": "1", "B": "true", "C": "1.5", "D": "",
                                       "E": "no", "F": "text", "G": "On"}


@pytest.mark.parametrize("entry, what", [
    ("'A=B': x", "key 'A=B': an environment variable name cannot contain '='"),
    ("'': x", "key '': an environment variable name must be a non-empty string"),
    ('"A\\0B": x', "key 'A\\x00B': an environment variable name cannot contain '=' or a NUL"),
    ('A: "x\\0y"', "A: an environment value cannot contain a NUL byte"),
])
def test_env_entries_that_no_environment_can_hold_are_refused(entry, what):
    msg = err(TWO.replace("codex\n", f"codex\n    env:\n      GOOD: 1\n      {entry}\n"))
    sep = ": " if what.startswith("key") else "."
    assert msg.startswith(f"lineup.yaml:6: participants.1.env{sep}{what}"), msg


def test_an_alias_bomb_is_refused_at_once():
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    started = time.monotonic()
    msg = err("\n".join(lines) + "\n" + TWO)
    assert time.monotonic() - started < 1
    assert re.fullmatch(r"lineup\.yaml:\d: aliases expand to more than 10000 values "
                        r"\(at '\*[a-i]'\); write the values out", msg), msg


def test_an_alias_inside_its_own_anchor_is_refused():
    assert err("participants: &p\n  - adapter: claude\n  - *p\n") == \
        "lineup.yaml:3: alias '*p' refers to the value that contains it"


def test_anchors_and_merges_within_the_bound_still_work():
    cfg = parse_text("participants:\n  - &base {adapter: claude, model: x, env: &env {K: v}}\n"
                     "  - <<: *base\n    name: other\n    env: *env\n", "x.yaml")
    assert [p.display for p in cfg.participants] == ["claude-x", "other"]
    assert cfg.participants[1].model == "x" and cfg.participants[1].env == {"K": "v"}


def test_the_first_error_by_line_is_reported():
    # pydantic checks participants before judge; the judge's problem is higher in the file
    msg = err("judge: {adapter: claude, modle: x}\nparticipants:\n  - adapter: claude\n"
              "  - adapter: codx\n")
    assert msg.startswith("lineup.yaml:1: unknown key 'judge.modle'"), msg
    # a missing key is on no line: it does not hide an unknown key further down
    assert err("rounds: 1\nround: 2\n") == \
        "lineup.yaml:2: unknown key 'round' (did you mean 'rounds'?)"
    assert err("rounds: 1\n") == "lineup.yaml:1: missing required key 'participants'"


def test_a_bin_that_cannot_be_run_is_named_with_its_line(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("#!/bin/sh\n")
    plain.chmod(0o644)
    msg = err(TWO.replace("codex\n", f"codex\n    bin: {tmp_path}\n"))
    assert msg == f"lineup.yaml:4: participants.1.bin: '{tmp_path}' is a directory"
    msg = err(TWO + f"judge:\n  adapter: claude\n  bin: {plain}\n")
    assert msg == f"lineup.yaml:6: judge.bin: '{plain}' is not executable"
    msg = err(TWO.replace("adapter: codex\n", f"adapter: command\n    name: c\n"
                          f"    argv: ['{plain}', x]\n"))
    assert msg == f"lineup.yaml:5: participants.1.argv.0: '{plain}' is not executable"


def test_per_participant_timeout_and_max_parallel():
    cfg = parse_text("max_parallel: 2\ntimeout_minutes: 4\n" + TWO.replace(
        "codex\n", "codex\n    timeout_minutes: 0.5\n") + "judge: {adapter: gemini, "
        "timeout_minutes: 30}\n", "x.yaml")
    assert cfg.max_parallel == 2 and cfg.timeout_minutes == 4
    assert [p.timeout_minutes for p in cfg.participants] == [None, 0.5]
    assert cfg.judge.timeout_minutes == 30
    assert err("maxParallel: 0\n" + TWO) == \
        "lineup.yaml:1: max_parallel: Input should be greater than or equal to 1"
    assert err(TWO.replace("codex\n", "codex\n    timeout_minutes: 0\n")).startswith(
        "lineup.yaml:4: participants.1.timeout_minutes: Input should be greater than 0")


@pytest.mark.parametrize("key, value", [
    ("name", '"two\\nlines"'), ("name", '"\\e]0;title\\a"'), ("name", '"nul\\0"'),
    ("model", '"m\\x9bx"'), ("name", '"tab\\tname"'),
])
def test_names_and_models_with_control_characters_are_refused(key, value):
    """A name is written into headings, the progress view and every artifact; a line break or
    an escape sequence in it would open a section or reach the terminal."""
    msg = err(TWO.replace("codex\n", f"codex\n    {key}: {value}\n"))
    assert msg.startswith(f"lineup.yaml:4: participants.1.{key}: "), msg
    assert "control character" in msg, msg


def test_names_with_spaces_slashes_and_non_ascii_still_load():
    cfg = parse_text(TWO.replace("codex\n", "codex\n    name: 'x/y z--ü ☃'\n"), "lineup.yaml")
    assert cfg.participants[1].display == "x/y z--ü ☃"


def test_an_unrunnable_bin_is_not_hidden_by_an_error_further_down(tmp_path):
    """The bin check needs no valid file: a directory named on line 4 is reported before an
    unknown key on line 5, and after one on line 1."""
    text = TWO.replace("codex\n", f"codex\n    bin: {tmp_path}\n")
    assert err(text + "rondus: 2\n") == \
        f"lineup.yaml:4: participants.1.bin: '{tmp_path}' is a directory"
    assert err("rondus: 2\n" + text).startswith("lineup.yaml:1: unknown key 'rondus'")


def test_a_config_from_a_pipe_loads_and_a_directory_is_named(tmp_path, monkeypatch):
    """``--config <(generate-lineup)`` hands over a pipe, not a regular file; a directory
    where the config should be is said to be one, also for the user config (which must not
    silently fall back to the built-in lineup)."""
    import os
    import threading

    fifo = tmp_path / "lineup.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=(GOOD,), daemon=True)
    writer.start()
    cfg, source = config.load(fifo)
    writer.join()
    assert source == str(fifo) and cfg.rounds == 2
    with pytest.raises(ConfigError, match="is a directory"):
        config.load(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    config.user_config_path().mkdir(parents=True)
    with pytest.raises(ConfigError, match="is a directory"):
        config.load(None)


@pytest.mark.parametrize("entry, key", [
    ('extra_args: ["--x", "a\\0b"]', "extra_args.1"), ('bin: "/usr/bin/c\\0"', "bin"),
    ('effort: "hi\\0gh"', "effort"),
])
def test_a_nul_byte_bound_for_a_command_line_is_refused(entry, key):
    """No command line can hold a NUL: the debate used to start, then die with an internal
    error when the turn's process was spawned (and --resume died the same way)."""
    msg = err(TWO.replace("codex\n", f"codex\n    {entry}\n"))
    assert msg.startswith(f"lineup.yaml:4: participants.1.{key}: "), msg
    assert "NUL" in msg, msg


def test_a_nul_byte_in_a_commands_argv_is_refused():
    msg = err(TWO.replace("adapter: codex\n", "adapter: command\n    argv: [sh, \"a\\0\"]\n"))
    assert msg.startswith("lineup.yaml:4: participants.1.argv.1: "), msg
