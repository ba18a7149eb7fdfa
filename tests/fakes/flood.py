#!/usr/bin/env python3
"""Fake CLI: streams argv[1] MiB of varied bytes to stdout; their sha256 goes to stderr."""

import hashlib
import sys

digest = hashlib.sha256()
out = sys.stdout.buffer
for i in range(int(sys.argv[1])):
    chunk = (b"%08d " % i) * (1024 * 1024 // 9) + b"\n" * (1024 * 1024 % 9)
    digest.update(chunk)
    out.write(chunk)
out.flush()
print(digest.hexdigest(), file=sys.stderr)
