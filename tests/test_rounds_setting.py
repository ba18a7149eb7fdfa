"""What ``--rounds`` means is the protocol's: disputatio's reaction rounds, a committee's and
Wind/Wall/Door's ``max_rounds``. A ``rounds`` key under ``protocol:`` is refused where the
protocol counts its rounds otherwise, at its line and naming the setting that does; the flag is
checked against the protocol's own cap; ``run --help`` says what it means for each."""

from __future__ import annotations

import json

import pytest

from support import invoke, one_path, sim, write_config


def _line_of(path, key: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), start=1)
                if text.strip().startswith(f"{key}:"))


@pytest.mark.parametrize("protocol", ["committee", "wind-wall-door"])
def test_a_rounds_key_is_refused_naming_max_rounds(home, protocol):
    path = write_config(home / "d.yaml", [sim("ada"), sim("bob")], protocol={"rounds": 2})
    ran = invoke("--config", str(path), "--protocol", protocol, "-q", "Tabs?", cwd=home)
    assert (ran.returncode, ran.stdout) == (2, ""), ran.stderr
    assert ran.stderr == (f"error: {path}:{_line_of(path, 'rounds')}: protocol.rounds: unknown "
                          "setting (max_rounds sets this protocol's rounds)\n")
    assert not (home / ".debate").exists()


@pytest.mark.parametrize("protocol", ["committee", "wind-wall-door"])
def test_a_rounds_key_is_refused_even_beside_the_flag(home, protocol):
    path = write_config(home / "d.yaml", [sim("ada"), sim("bob")], protocol={"rounds": 2})
    ran = invoke("--config", str(path), "--protocol", protocol, "--rounds", "2", "Tabs?",
                 cwd=home)
    assert ran.returncode == 2 and "protocol.rounds: unknown setting" in ran.stderr


@pytest.mark.parametrize("protocol,rounds,cap", [
    ("committee", "21", "less than or equal to 16"),
    ("committee", "17", "less than or equal to 16"),
    ("wind-wall-door", "21", "less than or equal to 20"),
])
def test_the_flag_is_checked_against_the_protocols_own_cap(home, protocol, rounds, cap):
    path = write_config(home / "d.yaml", [sim("ada"), sim("bob")])
    ran = invoke("--config", str(path), "--protocol", protocol, "--rounds", rounds, "Tabs?",
                 cwd=home)
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr == (f"error: --rounds: Input should be {cap} (for this protocol "
                          "--rounds sets max_rounds)\n")


def test_disputatio_keeps_its_reaction_rounds_cap(home):
    path = write_config(home / "d.yaml", [sim("ada"), sim("bob")])
    ran = invoke("--config", str(path), "--rounds", "21", "Tabs?", cwd=home)
    assert ran.returncode == 2
    assert ran.stderr == "error: --rounds: Input should be less than or equal to 20\n"


def test_the_flag_still_sets_a_wind_wall_door_debates_rounds(home):
    path = write_config(home / "d.yaml", [sim("ada"), sim("bob"), sim("cy")])
    ran = invoke("--config", str(path), "--protocol", "wind-wall-door", "--rounds", "1", "-q",
                 "Tabs?", cwd=home)
    assert ran.returncode == 0, ran.stderr
    data = json.loads((one_path(ran.stdout).parent / "debate.json").read_text())
    assert data["rounds"] == 1


def test_run_help_says_what_rounds_means_for_each_protocol():
    said = " ".join(invoke("run", "--help").stdout.split())
    rounds = said.split("--rounds", 1)[1].split("--timeout", 1)[0]
    assert "reaction rounds" in rounds and "disputatio" in rounds
    assert "committee" in rounds and "wind-wall-door" in rounds and "max_rounds" in rounds
