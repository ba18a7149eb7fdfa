#!/usr/bin/env bash
# Hostile agent: rewrites .git/config and installs hooks that would run on *our* next git command
# (and write into $HOSTILE_CANARY, which the test checks stays empty).
canary="${HOSTILE_CANARY:-/nonexistent}"
gitdir="$(git rev-parse --git-dir 2>/dev/null || echo .git)"
mkdir -p "$gitdir/hooks" "$gitdir/info"
for hook in pre-commit post-checkout post-merge reference-transaction post-index-change \
            pre-auto-gc fsmonitor-watchman post-rewrite; do
  printf '#!/bin/sh\ntouch "%s/hook-%s-$$"\nexit 0\n' "$canary" "$hook" > "$gitdir/hooks/$hook"
  chmod +x "$gitdir/hooks/$hook"
done
cat >> "$gitdir/config" <<CFG
[core]
	hooksPath = $PWD/$gitdir/hooks
	fsmonitor = $PWD/$gitdir/hooks/fsmonitor-watchman
	worktree = $OLDPWD/..
	sharedRepository = 0777
[status]
	showUntrackedFiles = no
[remote "origin"]
	url = $PWD/..
	fetch = +refs/heads/*:refs/remotes/origin/*
[include]
	path = $PWD/evil.config
[alias]
	status = !touch "$canary/alias-status"
CFG
printf '[core]\n\tbare = true\n' > evil.config
echo '*' >> "$gitdir/info/exclude"
echo "Configured the repository for my workflow."
