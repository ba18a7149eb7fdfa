"""Every protocol's ``protocol:`` settings are taken as written, like the rest of the lineup: a
quoted number, a boolean where a count belongs or a fraction is one usage error (exit 2) naming
the key, and no debate folder is made. ``--rounds`` is named when it is the flag that is wrong,
and a protocol whose settings have no rounds is not handed the lineup's."""

from __future__ import annotations

import sys
import types

import pytest
from pydantic import BaseModel, ConfigDict

from disputatio import protocols
from support import invoke, one_path, sim, write_config


@pytest.mark.parametrize("protocol,settings,key", [
    ("committee", {"max_rounds": "3"}, "protocol.max_rounds"),
    ("committee", {"max_rounds": True}, "protocol.max_rounds"),
    ("committee", {"attempts": 2.0}, "protocol.attempts"),
    ("disputatio", {"rounds": "2"}, "protocol.rounds"),
    ("disputatio", {"rounds": False}, "protocol.rounds"),
    ("wind-wall-door", {"max_turns": "6"}, "protocol.max_turns"),
    ("wind-wall-door", {"strict": "true"}, "protocol.strict"),
])
def test_a_setting_not_written_as_its_type_is_refused(home, protocol, settings, key):
    path = write_config(home / "d.yaml", [sim("ada"), sim("bob"), sim("cy")],
                        protocol=settings)
    ran = invoke("--config", str(path), "--protocol", protocol, "Tabs or spaces?", cwd=home)
    assert ran.returncode == 2, ran.stderr
    assert ran.stdout == ""
    lines = ran.stderr.strip().splitlines()
    line = _line_of(path, key.split(".")[1])
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}:{line}: {key}: "), \
        ran.stderr
    assert not (home / ".debate").exists()


def _line_of(path, key: str) -> int:
    """The line of a key under ``protocol:`` in a lineup file."""
    return next(i for i, text in enumerate(path.read_text().splitlines(), start=1)
                if text.strip().startswith(f"{key}:"))


@pytest.mark.parametrize("protocol,settings", [
    ("committee", {"max_rounds": 2, "attempts": 1}),
    ("disputatio", {"rounds": 0}),
])
def test_settings_written_as_their_type_still_run(home, protocol, settings):
    path = write_config(home / "d.yaml", [sim("ada"), sim("bob")], protocol=settings)
    ran = invoke("--config", str(path), "--protocol", protocol, "-q", "Tabs or spaces?",
                 cwd=home)
    assert ran.returncode == 0, ran.stderr
    assert (home / ".debate").is_dir()


@pytest.mark.parametrize("protocol,rounds,settings,said", [
    ("committee", "17", {}, "error: --rounds: Input should be less than or equal to 16"),
    ("committee", "0", {}, "error: --rounds: Input should be greater than or equal to 1"),
    ("wind-wall-door", "0", {}, "error: --rounds: Input should be greater than or equal to 1"),
    # the file's own mistake is still the file's, whatever --rounds says
    ("committee", "3", {"attempts": 0}, "error: {path}:2: protocol.attempts: "),
])
def test_a_wrong_rounds_flag_is_named_as_the_flag(home, protocol, rounds, settings, said):
    path = write_config(home / "d.yaml", [sim("ada"), sim("bob"), sim("cy")],
                        protocol=settings)
    ran = invoke("--config", str(path), "--protocol", protocol, "--rounds", rounds, "Tabs?",
                 cwd=home)
    assert ran.returncode == 2 and ran.stderr.startswith(said.format(path=path)), ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1
    assert not (home / ".debate").exists()


class _NoRounds(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    notes: int = 1


@pytest.fixture
def no_rounds(monkeypatch):
    """tests/toy_protocol.py with settings that have no rounds, registered as ``bare``."""
    import toy_protocol

    bare = types.ModuleType("bare_protocol")
    bare.__dict__.update({k: v for k, v in vars(toy_protocol).items()
                          if not k.startswith("__")})
    bare.Config = _NoRounds
    monkeypatch.setitem(sys.modules, "bare_protocol", bare)
    monkeypatch.setitem(protocols.KNOWN, "bare", "bare_protocol")


def test_a_protocol_whose_settings_have_no_rounds_runs(home, no_rounds):
    path = write_config(home / "d.yaml", [sim("ada"), sim("bob")], rounds=2)
    ran = invoke("--config", str(path), "--protocol", "bare", "-q", "Tabs?", cwd=home)
    assert ran.returncode == 0, ran.stderr
    assert one_path(ran.stdout).name == "notes.md"


def test_rounds_for_a_protocol_without_them_is_a_usage_error(home, no_rounds):
    path = write_config(home / "d.yaml", [sim("ada"), sim("bob")])
    ran = invoke("--config", str(path), "--protocol", "bare", "--rounds", "2", "Tabs?", cwd=home)
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr == "error: --rounds: this protocol has no rounds\n"
    assert not (home / ".debate").exists()
