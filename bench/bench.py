"""disputatio benchmark: the tool's own cost as ratios against unavoidable agent time.

Run: ``.venv/bin/python bench/bench.py`` (about two minutes on two cores). Not part of the test
suite's pass/fail; results and the machine go in docs/benchmarks.md.

- overhead: wall time ÷ critical path (sum of per-phase agent latencies) for simulated agents
  of fixed latency — 4 participants × (proposals + 2 reaction rounds) + respondeo + redactio,
  and at scale 12 participants × 3 rounds.
- startup: median wall time of ``disputatio --help`` / ``--version`` ÷ ``python -c pass``.
- memory: peak RSS of disputatio while one agent writes 200 MB to stdout.
- isolation: seconds on the critical path spent creating, resetting and removing checkouts of a
  20,000-file repository (4 participants × 4 turns) ÷ (participants × one ``git worktree add``).
- fence: per-turn spawn cost of the write fence — the median time ``transport.run`` takes for
  ``true`` with the fence (bwrap, a private temp dir made and removed, claude's state dirs
  bound) minus the same without it (target under 50 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

PY = sys.executable


def disputatio(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "disputatio", *args], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def lineup(path: Path, n: int, rounds: int, latency: float, repo: str | None = None,
           extra_env: dict | None = None) -> Path:
    env = {"DISPUTATIO_SIM_LATENCY": str(latency), **(extra_env or {})}
    data = {
        "rounds": rounds, "timeout_minutes": 10,
        "participants": [{"adapter": "simulated", "name": f"p{i}", "model": f"p{i}",
                          "env": env} for i in range(n)],
        "judge": {"adapter": "simulated", "name": "judge", "model": "judge", "env": env},
    }
    if repo:
        data["repo"] = repo
    path.write_text(yaml.safe_dump(data))
    return path


def ledger_events(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]


def overhead(n: int, rounds: int, latency: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cfg = lineup(work / "d.yaml", n, rounds, latency)
        t0 = time.monotonic()
        r = disputatio("bench", "--config", str(cfg), "--quiet", cwd=work)
        wall = time.monotonic() - t0
        assert r.returncode == 0, r.stderr
        events = ledger_events(Path(r.stdout.strip()).parent)
    phases = 1 + rounds + 2
    critical = phases * latency
    # the same, with each phase's slowest agent process as measured by the transport: this
    # counts the simulated agent's own interpreter start-up as agent time, as it would be for
    # a real CLI, leaving only what disputatio itself adds
    slowest: dict[tuple, float] = {}
    for e in events:
        if e["type"] == "turn_completed":
            key = (e["data"]["phase"], e["data"]["round"])
            slowest[key] = max(slowest.get(key, 0.0), e["data"]["duration_s"])
    measured = sum(slowest.values())
    return {"participants": n, "rounds": rounds, "latency_s": latency, "wall_s": wall,
            "critical_path_s": critical, "ratio": wall / critical,
            "measured_path_s": measured, "measured_ratio": wall / measured}


def startup(runs: int = 15) -> dict:
    def median_of(argv):
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=True)
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    exe = str(Path(PY).with_name("disputatio"))
    base = median_of([PY, "-c", "pass"])
    help_s = median_of([exe, "--help"])
    version_s = median_of([exe, "--version"])
    return {"python_s": base, "help_s": help_s, "version_s": version_s,
            "help_ratio": help_s / base, "version_ratio": version_s / base}


def memory(mb: int = 200) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cfg = work / "d.yaml"
        big = {"DISPUTATIO_SIM_OUTPUT_MB": str(mb)}
        data = {"rounds": 0, "participants": [
            {"adapter": "simulated", "name": "big", "model": "big", "env": big},
            {"adapter": "simulated", "name": "small", "model": "small"}],
            "judge": {"adapter": "simulated", "name": "judge", "model": "judge"}}
        cfg.write_text(yaml.safe_dump(data))
        proc = subprocess.Popen([PY, "-m", "disputatio", "bench", "--config", str(cfg),
                                 "--quiet"], cwd=work, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        peak = [0]

        def watch():
            status = Path(f"/proc/{proc.pid}/status")
            while proc.poll() is None:
                try:
                    for line in status.read_text().splitlines():
                        if line.startswith("VmHWM:"):
                            peak[0] = max(peak[0], int(line.split()[1]))
                except (OSError, ValueError):
                    pass
                time.sleep(0.02)

        t = threading.Thread(target=watch)
        t.start()
        out, err = proc.communicate()
        t.join()
        assert proc.returncode == 0, err
        folder = Path(out.strip()).parent
        size = next((folder / "raw").glob("*-proposal-big.stdout")).stat().st_size
    return {"agent_output_mb": size / 2**20, "peak_rss_mb": peak[0] / 1024}


def make_repo(root: Path, files: int = 20000) -> Path:
    repo = root / "big"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for i in range(files):
        d = repo / f"pkg{i % 100:03d}"
        d.mkdir(exist_ok=True)
        (d / f"mod{i:05d}.py").write_text(f"VALUE_{i} = {i}\n" * 20)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "synthetic"], check=True)
    return repo


def isolation(root: Path, n: int = 4) -> dict:
    repo = make_repo(root)
    wt = root / "wt"
    t0 = time.monotonic()
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(wt)],
                   check=True)
    worktree_s = time.monotonic() - t0
    subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(wt)],
                   check=True)
    work = root / "work"
    work.mkdir()
    # 4 turns per participant: proposal + 2 reactions, and redactio by a synthesizer that is
    # one of them; each agent dirties its checkout so every reset is a real one
    cfg = lineup(work / "d.yaml", n, 2, 1.0, repo=str(repo),
                 extra_env={"DISPUTATIO_SIM_TOUCH": "scratch.txt"})
    data = yaml.safe_load(cfg.read_text())
    data["synthesizer"] = dict(data["participants"][0])
    cfg.write_text(yaml.safe_dump(data))
    r = disputatio("bench", "--config", str(cfg), "--quiet", cwd=work)
    assert r.returncode == 0, r.stderr
    events = ledger_events(Path(r.stdout.strip()).parent)
    by_phase: dict[tuple, float] = {}
    for e in events:
        if e["type"] == "turn_completed":
            key = (e["data"]["phase"], e["data"]["round"])
            by_phase[key] = max(by_phase.get(key, 0.0), e["data"].get("workspace_s", 0.0))
    cleanup = next(e["data"]["cleanup_s"] for e in events if e["type"] == "debate_ended")
    waiting = sum(by_phase.values()) + cleanup
    return {"files": 20000, "participants": n, "worktree_add_s": worktree_s,
            "waiting_s": waiting, "cleanup_s": cleanup,
            "ratio": waiting / (n * worktree_s)}


def fence_cost(runs: int = 40) -> dict:
    from disputatio import adapters
    from disputatio.adapters import fence, transport
    from disputatio.adapters.base import Invocation

    claude_state = adapters.get("claude").state_dirs   # as a real claude turn is fenced
    with tempfile.TemporaryDirectory() as tmp:
        work, home = Path(tmp) / "ck", Path(tmp) / "home"
        work.mkdir()
        env = {**os.environ, "HOME": str(home)}
        inv = Invocation(argv=("true",))

        def median_of(f: fence.Fence) -> float:
            transport.use_fence(f)
            times = []
            for i in range(runs):
                t = time.perf_counter()
                cap = transport.run(inv, work, 30, Path(tmp) / "raw", f"t{i}", env,
                                    state=claude_state)
                times.append(time.perf_counter() - t)
                assert cap.exit_code == 0, cap.read_stderr()
            return statistics.median(times)

        on = fence.available()
        if not on.on:
            return {"mechanism": None, "reason": on.reason}
        median_of(on)  # warm caches (bwrap binary, page cache) before either side is timed
        off_s, on_s = median_of(fence.OFF), median_of(on)
        transport.use_fence(None)
    return {"mechanism": on.mechanism, "off_s": off_s, "on_s": on_s, "cost_s": on_s - off_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=5.0, help="simulated agent latency (s)")
    ap.add_argument("--skip-isolation", action="store_true")
    ap.add_argument("--only-fence", action="store_true", help="measure the write fence only")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    f = fence_cost()
    if f["mechanism"]:
        print(f"fence ({f['mechanism']}): a turn's spawn {f['on_s'] * 1000:.1f} ms fenced, "
              f"{f['off_s'] * 1000:.1f} ms without: {f['cost_s'] * 1000:.1f} ms per turn "
              "(target < 50 ms)")
    else:
        print(f"fence: not measured, none here ({f['reason']})")
    if args.only_fence:
        return
    for label, n, rounds, target in (("overhead", 4, 2, 1.05), ("scale", 12, 3, 1.10)):
        o = overhead(n, rounds, args.latency)
        print(f"{label} {n}×(1+{rounds} rounds)+judge+redactio: wall {o['wall_s']:.2f}s / "
              f"nominal critical path {o['critical_path_s']:.2f}s = {o['ratio']:.3f} "
              f"(target ≤ {target}); / measured agent path {o['measured_path_s']:.2f}s = "
              f"{o['measured_ratio']:.3f}")
    st = startup()
    print(f"startup: --help {st['help_s']:.3f}s ({st['help_ratio']:.1f}× python -c pass "
          f"{st['python_s']:.3f}s; target ≤ 0.35 s), --version {st['version_s']:.3f}s "
          f"({st['version_ratio']:.1f}×)")
    m = memory()
    print(f"memory: peak RSS {m['peak_rss_mb']:.0f} MB while an agent wrote "
          f"{m['agent_output_mb']:.0f} MB, all of it in raw/  (target ≤ 150 MB)")
    if not args.skip_isolation:
        with tempfile.TemporaryDirectory() as tmp:
            i = isolation(Path(tmp))
        print(f"isolation: {i['waiting_s']:.2f}s waiting on checkouts (cleanup "
              f"{i['cleanup_s']:.2f}s) / ({i['participants']} × worktree add "
              f"{i['worktree_add_s']:.2f}s) = {i['ratio']:.2f}  (target ≤ 1.5)")


if __name__ == "__main__":
    main()
