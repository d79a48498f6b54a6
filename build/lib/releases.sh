#!/usr/bin/env bash
# Releases as CHANGELOG.md names them, for scripts that build or render an earlier release.
# Source it; the repository root is the current directory.
#   release_commits           each release's commit, newest first (the first hex id of 7 to 40 digits on or under
#                             its "## <version>" heading, up to the next heading)
#   previous_release_commit   the newest release commit that is not HEAD itself (empty when there is none)

release_commits() {
  [ -f CHANGELOG.md ] || return 0
  local line in_release=0 found=0 id
  while IFS= read -r line; do
    case $line in
      '## '*)
        in_release=0; found=0
        if printf '%s\n' "$line" | grep -qE '^## \[?v?[0-9]+\.[0-9]+\.[0-9]+'; then in_release=1; fi
        ;;
    esac
    if [ "$in_release" = 1 ] && [ "$found" = 0 ]; then
      id=$(printf '%s\n' "$line" | grep -oE '\b[0-9a-f]{7,40}\b' | head -1 || true)
      if [ -n "$id" ]; then echo "$id"; found=1; fi
    fi
  done <CHANGELOG.md
}

previous_release_commit() {
  local head c full
  head=$(git rev-parse HEAD)
  for c in $(release_commits); do
    full=$(git rev-parse --verify -q "$c^{commit}" || echo "$c")
    if [ "$full" != "$head" ]; then echo "$full"; return 0; fi
  done
}
