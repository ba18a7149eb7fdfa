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


def test_missing_judge():
    assert err("participants:\n  - adapter: claude\n  - adapter: codex\n") == \
        "lineup.yaml:1: missing required key 'judge'"


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
