"""`run --help` names the file whose path a debate prints on stdout; every protocol's deliverable
must be among those names, or a script reading the help expects the wrong file."""

from __future__ import annotations

import re

import pytest
import yaml

from support import invoke, one_path, sim


def _help_names() -> set[str]:
    r = invoke("run", "--help")
    assert r.returncode == 0
    return set(re.findall(r"[a-z-]+\.md", " ".join(r.stdout.split())))


@pytest.mark.parametrize("protocol, judged", [
    ("disputatio", True), ("disputatio", False), ("committee", False), ("wind-wall-door", False)])
def test_the_path_on_stdout_is_a_deliverable_run_help_names(tmp_path, protocol, judged):
    lineup = {"participants": [sim("ada"), sim("bob")]}
    if judged:
        lineup["judge"] = sim("judge")
    config = tmp_path / "lineup.yaml"
    config.write_text(yaml.safe_dump(lineup, sort_keys=False))
    r = invoke("Should we?", "--config", str(config), "--protocol", protocol, "--rounds", "1",
               "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert one_path(r.stdout).name in _help_names()
