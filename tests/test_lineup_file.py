"""lineup.json is the one file a user edits to fix a debate before ``--resume`` (an env value,
a bin); an edit that no lineup can hold is a usage error on one line, not an internal error."""

from __future__ import annotations

import json

import pytest

from support import invoke, sim, write_config


@pytest.mark.parametrize("edit, what", [
    (lambda lu: lu["lineup"]["b"].update(env={"A=B": "1"}), "cannot contain '='"),
    (lambda lu: lu["lineup"]["b"].update(adapter="nope"), "unknown adapter 'nope'"),
    (lambda lu: lu["lineup"]["b"].update(name="x\ny"), "control character"),
    (lambda lu: lu["lineup"].update(b=["not", "an", "entry"]), "b"),
    (lambda lu: lu.pop("lineup"), "lineup"),
])
def test_an_edited_lineup_that_cannot_run_is_one_line_and_exit_2(home, edit, what):
    failing = sim("b", DISPUTATIO_SIM_FAIL=1)
    cfg = write_config(home / "d.yaml", [sim("a"), failing, sim("c", DISPUTATIO_SIM_FAIL=1)],
                       rounds=0)
    r = invoke("q", "--config", str(cfg), "-q", cwd=home)
    assert r.returncode == 1, r.stderr
    folder = next((home / ".debate").glob("debate-*"))
    path = folder / "lineup.json"
    lineup = json.loads(path.read_text())
    edit(lineup)
    path.write_text(json.dumps(lineup))
    before = (folder / "events.jsonl").read_bytes()

    r = invoke("--resume", "-q", cwd=home)
    assert r.returncode == 2 and r.stdout == "", r.stderr
    said = [ln for ln in r.stderr.splitlines() if not ln.startswith("warning: ")]
    assert len(said) == 1 and said[0].startswith(f"error: {path}: "), r.stderr
    assert what in said[0] and "internal error" not in said[0], said[0]
    assert (folder / "events.jsonl").read_bytes() == before
