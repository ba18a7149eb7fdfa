"""The viewer under load: 50 clients streaming a debate of 1,000 events, half of them written
by another process while they watch. Every client sees every event once, in order, and the
server's memory does not grow with its clients (one copy of the ledger's frames is shared;
a client is a cursor into it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from disputatio import ledger
from support.watching import Stream, add_turn, append_elsewhere, make_debate

CLIENTS = 50
TEXT = 4000                  # characters of each answer: the ledger is about 4 MB in the end
BEFORE, DURING = 250, 250    # turns (two events each) written before the clients, and during
LAST = 1 + 2 * (BEFORE + DURING)
# what the server may grow by while 50 clients stream it; a copy of the ledger per client
# would be 50 x 4 MB
GROWTH_LIMIT_MB = 40


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.process
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RSS from /proc")
def test_fifty_clients_see_every_event_once_in_order_in_bounded_memory(home):
    debate = make_debate(home)
    events = debate / "events.jsonl"
    led = ledger.Ledger(events)
    for n in range(BEFORE):
        add_turn(events, f"early{n}", f"answer {n} " + "y" * TEXT, led)
    server = subprocess.Popen([sys.executable, "-m", "disputatio", "watch", "--no-open",
                               "--port", "0"], cwd=home, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        path = f"/v1/debates/{debate.name}/stream"
        warm = Stream(url, path)   # the ledger read once, the frames built
        assert warm.seqs_until(1 + 2 * BEFORE) == list(range(1, 2 + 2 * BEFORE))
        warm.close()
        baseline = rss_mb(server.pid)
        peak = [baseline]
        seen: list[list[int]] = [[] for _ in range(CLIENTS)]
        errors: list[BaseException] = []
        streams = [Stream(url, path, timeout=60) for _ in range(CLIENTS)]

        def client(n: int) -> None:
            try:
                seen[n] = streams[n].seqs_until(LAST)
            except BaseException as exc:   # reported below, with the others
                errors.append(exc)
            finally:
                streams[n].close()

        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], rss_mb(server.pid))
                done.wait(0.05)

        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        sampler = threading.Thread(target=sample)
        sampler.start()
        for t in threads:
            t.start()
        writer = append_elsewhere(events, DURING, pad=TEXT)
        assert writer.wait(120) == 0
        for t in threads:
            t.join(120)
        done.set()
        sampler.join()
        assert errors == []
        assert not any(t.is_alive() for t in threads)
        for n in range(CLIENTS):
            assert seen[n] == list(range(1, LAST + 1)), f"client {n}"
        growth = peak[0] - baseline
        print(f"\nserver RSS: {baseline:.1f} MB with the ledger read, peak {peak[0]:.1f} MB "
              f"with {CLIENTS} clients streaming {LAST} events ({growth:+.1f} MB); ledger "
              f"{events.stat().st_size / 1e6:.1f} MB")
        assert growth < GROWTH_LIMIT_MB
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.communicate(timeout=15)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
    assert server.returncode == 0
    assert os.path.getsize(events) > 0
