"""Big answers are cut visibly: the whole output stays in raw/, the ledger and the artifacts hold
a bounded part with a marker saying how much more there is and where, and no prompt grows past
what every CLI accepts however much the agents wrote."""

from __future__ import annotations

import json
import re

from disputatio.engine import ANSWER_LIMIT
from disputatio.protocols.base import QUAESTIO_BUDGET, RULING_BUDGET, TRANSCRIPT_BUDGET
from support import invoke, sim, write_config

CODEX_PROMPT_LIMIT = 1_048_576


def _big(name: str, mb: int) -> dict:
    return {"adapter": "command", "name": name,
            "argv": ["sh", "-c", f"cat >/dev/null; head -c {mb * 1000 * 1000} /dev/zero | "
                     "tr '\\0' 'x'; echo; echo THE-END"]}


def test_a_50_mb_answer_is_cut_visibly_and_prompts_stay_bounded(home):
    cfg = write_config(home / "d.yaml", [_big("huge", 50), _big("large", 2), sim("small")],
                       rounds=1)
    r = invoke("q", "--config", str(cfg), cwd=home)
    assert r.returncode == 0, r.stderr
    folder = (home / r.stdout.strip()).parent
    events = [json.loads(x) for x in (folder / "events.jsonl").read_text().splitlines()]
    done = {e["data"]["turn_id"]: e["data"] for e in events if e["type"] == "turn_completed"}
    huge = done["proposal/huge"]
    assert huge["ok"] is True
    assert len(huge["text"]) <= ANSWER_LIMIT
    marker = re.search(r"\[cut: ([\d.]+) MB more in raw/(\S+)\]$", huge["text"])
    assert marker, huge["text"][-200:]
    assert 49.0 < float(marker.group(1)) <= 50.1
    raw = folder / "raw" / marker.group(2)
    assert raw.stat().st_size > 50_000_000 and raw.read_bytes().endswith(b"THE-END\n")
    assert huge["text_cut_bytes"] > 49_000_000
    # every prompt, the judge's and the synthesizer's included, is bounded
    bound = TRANSCRIPT_BUDGET + QUAESTIO_BUDGET + RULING_BUDGET + 20_000
    prompts = sorted((folder / "raw").glob("*.prompt.md"))
    assert any("respondeo" in p.name for p in prompts)
    for p in prompts:
        size = len(p.read_text())
        assert size < min(bound, CODEX_PROMPT_LIMIT), (p.name, size)
    judge_prompt = next(p for p in prompts if "respondeo" in p.name).read_text()
    assert "[cut: " in judge_prompt and "of this text not shown here" in judge_prompt
    # the small answer reached the judge whole
    assert "Proposal from small" in judge_prompt
    md = (folder / "debate.md").read_text()
    assert "[cut: " in md and len(md) < 10 * ANSWER_LIMIT
