#!/usr/bin/env python3
"""Fake agent CLI for exit-path tests; prints one line, so it can be a debate participant.

Environment knobs:
  FAKE_TREE=1          start a grandchild in our process group that ignores SIGTERM, holds
                       stdout open and never exits on its own
  FAKE_IGNORE_TERM=1   ignore SIGTERM ourselves
  FAKE_FILES=N         first litter the working directory with N entries (litter/<k>/<n>)
  FAKE_HANG=1          never answer
  FAKE_HANG_UNTIL=P    answer only once the file P exists
  FAKE_PID_DIR=D       write our pid (and the grandchild's) into D as <role>-<pid>
"""

import os
import signal
import subprocess
import sys
import time


def note(role: str) -> None:
    d = os.environ.get("FAKE_PID_DIR")
    if d:
        open(os.path.join(d, f"{role}-{os.getpid()}"), "w").close()


def grandchild() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    note("grandchild")
    while True:
        signal.pause()


def main() -> None:
    if sys.argv[1:2] == ["--grandchild"]:
        grandchild()
    env = os.environ
    if env.get("FAKE_IGNORE_TERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if env.get("FAKE_TREE"):
        subprocess.Popen([sys.executable, os.path.abspath(__file__), "--grandchild"],
                         stdin=subprocess.DEVNULL)  # inherits our stdout and stderr
    if env.get("FAKE_FILES"):  # hard links: many entries to remove, cheap to create
        open("litter.txt", "w").close()
    for n in range(int(env.get("FAKE_FILES") or 0)):
        if n % 500 == 0:
            os.makedirs(f"litter/{n // 500}")
        os.link("litter.txt", f"litter/{n // 500}/{n}")
    note("child")
    until = env.get("FAKE_HANG_UNTIL")
    while env.get("FAKE_HANG") or (until and not os.path.exists(until)):
        time.sleep(0.02)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    print(f"fake agent answered in {os.path.basename(os.getcwd())} at {head or 'no repo'}",
          flush=True)


if __name__ == "__main__":
    main()
