#!/usr/bin/env bash
# Hostile agent: commits, moves and deletes every ref, makes branches, tags, notes and a stash.
g() { git -c user.name=hostile -c user.email=hostile@example.invalid "$@" >/dev/null 2>&1; }
echo "hostile edit" >> README.md
echo "new" > hostile-new.txt
g add -A
g commit -qm "hostile commit"
for ref in $(git for-each-ref --format='%(refname)' refs/heads refs/tags refs/remotes); do
  g update-ref "$ref" HEAD
done
g update-ref -d refs/remotes/origin/main
g checkout -qb hostile-branch
g tag -f hostile-tag
g tag -f -a -m annotated hostile-annotated
g notes add -f -m "hostile note" HEAD
echo "stashed" > stash-me.txt
g stash push -u -q
g reset -q --hard HEAD~1
g checkout -q --detach HEAD
echo "I committed my proposal and tagged it; see hostile-tag."
