#!/usr/bin/env bash
# Releases as CHANGELOG.md names them, for scripts that build or render an earlier release.
# Source it; the repository root is the current directory.
#   releases                  "<version> <commit>" per release, newest first: the version of each "## <version>"
#                             heading and the first "commit <id>" (7 to 40 hex digits, maybe in backquotes) from
#                             that heading to the next one; a heading with no commit (in the making) is no release
#   release_commits           each release's commit, newest first
#   previous_release_commit   the newest release commit that is not HEAD itself, in full (empty when none)
#   release_version COMMIT    the version CHANGELOG.md gives that commit

releases() {
  [ -f CHANGELOG.md ] || return 0
  local line version="" id
  while IFS= read -r line; do
    case $line in
      '## '*)
        version=$(printf '%s\n' "$line" | grep -oE '^## \[?v?[0-9]+\.[0-9]+\.[0-9]+' | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' || true)
        ;;
    esac
    if [ -n "$version" ]; then
      id=$(printf '%s\n' "$line" | grep -oE 'commit:? `?[0-9a-f]{7,40}\b' | grep -oE '[0-9a-f]{7,40}$' | head -1 || true)
      if [ -n "$id" ]; then echo "$version $id"; version=""; fi
    fi
  done <CHANGELOG.md
}

release_commits() {
  releases | cut -d' ' -f2
}

previous_release_commit() {
  local head c full
  head=$(git rev-parse HEAD)
  for c in $(release_commits); do
    full=$(git rev-parse --verify -q "$c^{commit}" || echo "$c")
    if [ "$full" != "$head" ]; then echo "$full"; return 0; fi
  done
}

release_version() {
  local v c
  while read -r v c; do
    if [[ "$1" == "$c"* ]] || [[ "$c" == "$1"* ]]; then echo "$v"; return 0; fi
  done < <(releases)
}
