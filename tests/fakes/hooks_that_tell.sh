#!/bin/sh
# Hostile agent: tests/hostile/rewrite_config_and_hooks.sh, whose hooks also write down the
# command line of the process that ran the git that ran them: another agent (whose git commands
# may reach a sibling's checkout, as documented) or disputatio itself (which must never happen).
# Its own hooks point nowhere: in the moment before ours replace them, another agent's git may
# run them, and an empty file would say nothing.
HOSTILE_CANARY=/nonexistent "$(dirname "$0")/../hostile/rewrite_config_and_hooks.sh"
gitdir="$(git rev-parse --git-dir 2>/dev/null || echo .git)"
for hook in "$gitdir"/hooks/*; do
  case "$hook" in *.sample) continue ;; esac
  cat > "$hook" <<HOOK
#!/bin/sh
caller=\$(cut -d' ' -f4 /proc/\$PPID/stat)
tr '\\0' ' ' > "$HOSTILE_CANARY/hook-\$(basename "\$0")-\$\$" < /proc/\$caller/cmdline
exit 0
HOOK
done
