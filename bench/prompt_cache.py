"""disputatio benchmark: how much of each prompt a provider's prefix cache can serve.

Run: ``.venv/bin/python bench/prompt_cache.py`` (a few seconds). It runs a real debate
(``python -m disputatio``) of 3 participants × 3 reaction rounds whose agents are a small
script answering about 2 KB each, then reads the prompts exactly as the CLIs got them from
``raw/`` and prints, per participant and per round, the shared prefixes in bytes:

- own: how much of a participant's previous prompt its next prompt starts with (a CLI's own
  cache, turn after turn; target ≥ 90 %);
- across: in one round, the longest common prefix of two participants' prompts over the longer
  of the two (what participants of one model share; target ≥ 90 %);
- cacheable: of all prompt bytes the debaters were sent, the part that repeats the start of
  that participant's previous prompt (what a per-CLI cache can serve at about a tenth of the
  price), and at most the part that repeats the start of any prompt sent before it (one cache
  for every debater, as when they run one model on one account; an upper bound, since the
  prompts of a round are sent at once).

Not part of the test suite's pass/fail (``tests/test_prompt_cache.py`` asserts the targets);
results go in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from itertools import combinations
from pathlib import Path

import yaml

PY = sys.executable
QUAESTIO = ("Should the billing service replace its hand-written SQL with the ORM the rest of "
            "the codebase uses?")

# A debater that answers about SIZE bytes of text, different for every prompt it gets.
AGENT = r'''
import hashlib, sys
name, size = sys.argv[1], int(sys.argv[2])
prompt = sys.stdin.read()
seed = hashlib.sha256((name + prompt).encode()).hexdigest()
words, n = [], 0
while sum(len(w) + 1 for w in words) < size:
    words.append(hashlib.sha256(f"{seed}/{n}".encode()).hexdigest()[: 3 + n % 7])
    n += 1
    if n % 12 == 0:
        words.append("\n")
print(" ".join(words))
'''

_RAW = re.compile(r"^\d+-(proposal|reaction-(\d+))-(.+)\.prompt\.md$")


def run_debate(work: Path, participants: int, rounds: int, size: int) -> Path:
    """The debate folder of a finished debate with script debaters and a simulated judge."""
    agent = work / "agent.py"
    agent.write_text(AGENT)
    names = [f"p{i}" for i in range(participants)]
    cfg = work / "lineup.yaml"
    cfg.write_text(yaml.safe_dump({
        "rounds": rounds, "timeout_minutes": 5,
        "participants": [{"adapter": "command", "name": n, "output": "text",
                          "argv": [PY, str(agent), n, str(size)]} for n in names],
        "judge": {"adapter": "simulated", "name": "judge", "model": "judge"}}))
    r = subprocess.run([PY, "-m", "disputatio", "run", QUAESTIO, "--config", str(cfg), "-q"],
                       cwd=work, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       env={**os.environ, "DISPUTATIO_FENCE": os.environ.get(
                           "DISPUTATIO_FENCE", "off")})
    if r.returncode != 0 and not r.stdout.strip():
        sys.exit(f"error: the debate failed: {r.stderr.strip()}")
    return Path(r.stdout.strip()).parent


def prompts_of(debate: Path) -> dict[str, list[bytes]]:
    """Each debater's prompts in turn order (proposal, reaction 1, 2, ...), as sent."""
    found: dict[str, list[tuple[int, bytes]]] = {}
    for f in sorted((debate / "raw").glob("*.prompt.md")):
        m = _RAW.match(f.name)
        if m:
            found.setdefault(m.group(3), []).append((int(m.group(2) or 0), f.read_bytes()))
    return {n: [b for _, b in sorted(ps)] for n, ps in sorted(found.items())}


def shared(a: bytes, b: bytes) -> int:
    return len(os.path.commonprefix([a, b]))


def measure(by_person: dict[str, list[bytes]]) -> dict:
    own = {n: [shared(a, b) / len(a) for a, b in zip(ps, ps[1:], strict=False)]
           for n, ps in by_person.items()}
    turns = list(zip(*by_person.values(), strict=True))
    across = [[shared(a, b) / max(len(a), len(b)) for a, b in combinations(t, 2)]
              for t in turns]
    sent = sum(len(p) for ps in by_person.values() for p in ps)
    cacheable = sum(shared(a, b) for ps in by_person.values()
                    for a, b in zip(ps, ps[1:], strict=False))
    sizes = [[len(p) for p in t] for t in turns]
    seen: list[bytes] = []   # one cache for every debater (one model): any prompt sent before
    pooled = 0
    for t in turns:
        for p in t:
            pooled += max((shared(p, q) for q in seen), default=0)
            seen.append(p)
    return {"own": own, "across": across, "sent": sent, "cacheable": cacheable,
            "pooled": pooled, "sizes": sizes}


def report(m: dict) -> str:
    lines = ["turn         prompt bytes (each debater)   own prefix vs previous   across (min)"]
    names = list(m["own"])
    for i, sizes in enumerate(m["sizes"]):
        turn = "proposal" if i == 0 else f"reaction {i}"
        own = "—" if i == 0 else " ".join(f"{m['own'][n][i - 1]:.1%}" for n in names)
        lines.append(f"{turn:<12} {' '.join(str(s) for s in sizes):<29} {own:<24} "
                     f"{min(m['across'][i]):.1%}")
    lines.append(f"own: min {min(min(v) for v in m['own'].values()):.1%} · across: min "
                 f"{min(min(v) for v in m['across']):.1%} · debaters' prompts {m['sent']} "
                 f"bytes, of which {m['cacheable']} ({m['cacheable'] / m['sent']:.0%}) repeat "
                 "the start of that debater's previous prompt; "
                 f"at most {m['pooled']} ({m['pooled'] / m['sent']:.0%}) the start of any "
                 "prompt sent before it (one cache for all debaters: one model)")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--participants", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--answer-bytes", type=int, default=2048)
    ap.add_argument("--keep", action="store_true", help="print the debate folder, keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        debate = run_debate(Path(tmp), args.participants, args.rounds, args.answer_bytes)
        print(f"{args.participants} participants × {args.rounds} rounds, answers of about "
              f"{args.answer_bytes} bytes")
        print(report(measure(prompts_of(debate))))
        if args.keep:
            keep = Path(tempfile.mkdtemp(prefix="prompt-cache-"))
            subprocess.run(["cp", "-a", str(debate), str(keep)], check=True)
            print(f"kept in {keep / debate.name}")


if __name__ == "__main__":
    main()
