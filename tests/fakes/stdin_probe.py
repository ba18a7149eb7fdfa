#!/usr/bin/env python3
"""Fake CLI: prints what its stdin is, then the length and sha256 of everything read from it."""

import hashlib
import os
import sys

print(os.readlink("/proc/self/fd/0"), flush=True)
data = sys.stdin.buffer.read()
print(len(data), hashlib.sha256(data).hexdigest())
