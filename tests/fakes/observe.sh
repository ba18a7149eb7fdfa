#!/bin/sh
# Fake agent: one line describing what its checkout holds, for the test to compare.
printf 'subject=%s readme=%s staged=%s untracked=%s ignored=%s remotes=%s\n' \
  "$(git log -1 --format=%s 2>/dev/null | tr ' ' _)" "$(head -n 1 README.md | tr ' ' _)" \
  "$(cat staged.txt 2>/dev/null || echo -)" "$(cat notes/todo.txt 2>/dev/null || echo -)" \
  "$(cat debug.log 2>/dev/null || echo -)" "$(git remote | wc -l | tr -d ' ')"
