"""Every answer is credited to the participant who gave it, whatever the participants are called:
raw files are per turn, never derived from a name alone."""

from __future__ import annotations

import json

from support import invoke, write_config

# names that collapse to one another when characters a file name cannot hold are replaced
NAMES = ["x y", "x--y", "x/y", "x\\y", "X Y", "x:y", "ÿ ü", "Ÿ Ü", "x/../y", ".x"]


def test_answers_are_credited_to_their_authors(home):
    participants = []
    for i, name in enumerate(NAMES):
        said = "" if i == 1 else f"answer number {i}"   # "x--y" prints nothing
        participants.append({"adapter": "command", "name": name,
                             "argv": ["sh", "-c", 'printf "%s" "$WHO"'],
                             "env": {"WHO": said}})
    cfg = write_config(home / "lineup.yaml", participants, rounds=0)
    res = invoke("--config", str(cfg), "--quiet", "Who said what?", cwd=home)
    assert res.returncode == 0, res.stderr
    debate = next((home / ".debate").glob("debate-*"))
    turns = {t["turn_id"]: t for t in json.loads((debate / "debate.json").read_text())["turns"]}
    events = [json.loads(line) for line in (debate / "events.jsonl").read_text().splitlines()]
    completed = {e["data"]["turn_id"]: e["data"] for e in events
                 if e["type"] == "turn_completed"}
    for i, name in enumerate(NAMES):
        turn = turns[f"proposal/{name}"]
        data = completed[f"proposal/{name}"]
        if i == 1:
            assert turn["ok"] is False and turn["failure"] == "empty", turn
        else:
            assert turn["ok"] is True, turn
            assert data["text"] == f"answer number {i}"
        # its own raw files hold its own output, and no other turn's names them
        out = (debate / "raw" / data["raw"][0]).read_text()
        assert out == ("" if i == 1 else f"answer number {i}")
    raws = [f for d in completed.values() for f in d["raw"]]
    assert len(raws) == len(set(raws))
    assert all((debate / "raw" / f).is_file() for f in raws)
