"""The prompt layout against a provider's prefix cache, with the five real CLIs.

Why: ``tests/test_prompt_cache.py`` proves that our prompts share their prefixes, but a cache
hit needs the whole request to: each CLI puts its own system prompt, tools and context in
front of our prompt, and anything in there that changes from turn to turn (a session id, a
time, a temp path) would make every turn a miss whatever our layout. The scripted server
answers as a provider with an automatic prefix cache (``PrefixCache``: the longest prefix shared
with an earlier request of the same model, in 128-token steps), each CLI reports what it was
told, and disputatio records it: so the cached input recorded for a debater's next turn shows
what a real provider would serve.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest
import yaml

from support.real_tier import WIRE, calc_repo, run_debate

from .clis import NAMES, participant_entry
from .model_server import (
    PrefixCache,
    Request,
    ScriptedModelServer,
    Text,
    cacheable,
    debate_default,
)

pytestmark = pytest.mark.real

ANSWER_BYTES = 2048
ROUNDS = 2
_RAW = re.compile(r"^\d+-(proposal|reaction-(\d+))-(.+)\.prompt\.md$")


def long_answer(req: Request) -> Text:
    """About 2 KB of prose, different for every request: a debater with something to say."""
    if not req.prompt.strip():
        return debate_default(req)
    seed = hashlib.sha256(req.raw).hexdigest()
    words, n = [], 0
    while sum(len(w) + 1 for w in words) < ANSWER_BYTES:
        words.append(hashlib.sha256(f"{seed}/{n}".encode()).hexdigest()[: 3 + n % 7])
        n += 1
    return Text(" ".join(words))


@pytest.fixture
def repo(tmp_path) -> Path:
    return calc_repo(tmp_path)


def prompts_of(folder: Path) -> dict[str, list[bytes]]:
    found: dict[str, list[tuple[int, bytes]]] = {}
    for f in (folder / "raw").glob("*.prompt.md"):
        m = _RAW.match(f.name)
        if m:
            found.setdefault(m.group(3), []).append((int(m.group(2) or 0), f.read_bytes()))
    return {n: [b for _, b in sorted(ps)] for n, ps in found.items()}


# CLIs whose requests keep every byte before our prompt from one turn to the next; the others
# put a new session's own folder (a fresh uuid per turn: each turn is a new session) in their
# system prompt, so a provider's cache serves them only what comes before it
KEEPS_PREFIX = ("claude", "codex", "pi")
SESSION_IN_SYSTEM_PROMPT = ("gemini", "copilot")
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
OUR_HEAD = b"This is a structured debate between independent coding agents."


def test_a_debaters_next_turn_is_served_from_the_cache_but_for_what_is_new(real_clis, repo,
                                                                          tmp_path):
    cache = PrefixCache()
    with ScriptedModelServer(default=long_answer, usage=cache) as server:
        homes = tmp_path / "homes"
        config = tmp_path / "debate.yaml"
        config.write_text(yaml.safe_dump({
            "participants": [participant_entry(n, real_clis[n], server.url, homes / n)
                             for n in NAMES]}, sort_keys=False))
        run = run_debate(tmp_path, config, repo, "--rounds", str(ROUNDS))
        info = run.info(server)
        assert run.returncode == 0 and run.folder, info
        data = run.data()
        assert data["status"] == "debated" and data["degraded"] == [], info
        turns = {n: [r for r in server.turns if WIRE[n](r)] for n in NAMES}
    prompts = prompts_of(run.folder)
    recorded = {(t["role"], t["round"]): t["tokens"] or {} for t in data["turns"]}
    lines = []
    for name in NAMES:
        # one request per turn (the scripted model answers at once), in turn order
        assert len(turns[name]) == ROUNDS + 1, info
        # disputatio recorded what the CLI was told, request by request
        for rnd, req in enumerate(turns[name]):
            assert req.usage is not None
            got = recorded[(name, rnd)]
            assert (got.get("input"), got.get("cached")) == (req.usage[0], req.usage[2]), \
                (name, rnd, got, req.usage)
        for rnd in range(1, ROUNDS + 1):
            before, now = recorded[(name, rnd - 1)], recorded[(name, rnd)]
            served = now["cached"] / before["input"]
            ours = prompts[name][rnd - 1:rnd + 1]
            new = len(ours[1]) - len(os.path.commonprefix(ours))
            billed = now["input"] - now["cached"]
            lines.append(f"{name} round {rnd}: {now['cached']} of {now['input']} input tokens "
                         f"cached = {served:.1%} of the previous turn's {before['input']}; "
                         f"{billed} uncached, {new // PrefixCache.TOKEN_BYTES} new in our prompt")
            if name in KEEPS_PREFIX:
                # the previous turn's whole request (the CLI's own system prompt and tools,
                # then our prompt but its last lines) is served from the cache ...
                assert served >= 0.9, lines[-1]
                # ... and what is billed in full is what is new, give or take the cache's
                # 128-token steps and JSON's escapes
                assert billed <= new / PrefixCache.TOKEN_BYTES * 1.05 + 2 * PrefixCache.STEP, \
                    lines[-1]
                # so once the transcript holds earlier rounds, most of our prompt is cached
                # (with the name and round first, as before, all of it was billed in full)
                if rnd >= 2:
                    assert billed <= 0.5 * len(ours[1]) / PrefixCache.TOKEN_BYTES, lines[-1]
    for name in SESSION_IN_SYSTEM_PROMPT:
        for a, b in zip(turns[name], turns[name][1:], strict=False):
            x, y = cacheable(a), cacheable(b)
            split = len(os.path.commonprefix([x, y]))
            # the first difference is a session uuid in the CLI's own text, before ours
            assert split < x.index(OUR_HEAD), (name, x[split - 200:split + 100])
            assert _UUID.search(x[split - 36:split + 36]), (name, x[split - 200:split + 100])
    print("\n" + "\n".join(lines))
