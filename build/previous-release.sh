#!/usr/bin/env bash
# Builds the previous release (the newest commit CHANGELOG.md names other than HEAD) once, and prints the folder
# of its distribution (its dist/: jars/, spark/, mr/, VERSION, and the release tarball). The build is cached by
# commit under ~/.cache/estuary/releases/<commit>/ (ESTUARY_RELEASE_CACHE), so CI and later runs reuse it.
#
# The release is built from a detached git worktree of its commit, with its poms' snapshot version replaced by the
# release's own version (the "## <version>" heading in CHANGELOG.md): its artifacts then install into the local
# Maven repository beside this tree's snapshot, never over it. Only the modules its distribution needs are built.
#
# Usage: build/previous-release.sh   (prints the dist folder on stdout; progress on stderr; exits 3 when
#                                      CHANGELOG.md names no earlier release)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=build/lib/releases.sh
. build/lib/releases.sh
commit=$(previous_release_commit)
[ -n "$commit" ] || { echo "previous-release: CHANGELOG.md names no release before HEAD" >&2; exit 3; }
if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
  # A shallow clone lacks older commits: ask the clone's origin for the release's history once.
  echo "previous-release: commit $commit is not in this clone; fetching it from origin" >&2
  git fetch -q --unshallow origin >&2 2>/dev/null || git fetch -q origin "$commit" >&2 || true
  git cat-file -e "$commit^{commit}" 2>/dev/null \
    || { echo "previous-release: commit $commit is not in this clone, nor at its origin" >&2; exit 1; }
fi
version=$(release_version "$commit")
[ -n "$version" ] || { echo "previous-release: no version heading for $commit in CHANGELOG.md" >&2; exit 1; }
cache=${ESTUARY_RELEASE_CACHE:-$HOME/.cache/estuary/releases}/$commit
if [ -f "$cache/dist/VERSION" ] && [ -f "$cache/dist/estuary-$version-bin.tar.gz" ]; then
  echo "$cache/dist"
  exit 0
fi

src=$cache/src
echo "previous-release: building $version from ${commit:0:10} in $src" >&2
t0=$(date +%s)
rm -rf "$cache"
mkdir -p "$cache"
git worktree prune
git worktree add -q --detach "$src" "$commit" >&2
(
  cd "$src"
  snapshot=$(sed -n 's:.*<version>\(.*-SNAPSHOT\)</version>.*:\1:p' pom.xml | head -1)
  [ -n "$snapshot" ] && find . -name pom.xml -not -path '*/target/*' -exec sed -i "s:<version>$snapshot</version>:<version>$version</version>:" {} +
  [ ! -f charts/estuary/Chart.yaml ] || sed -i "s/^appVersion: .*/appVersion: \"$version\"/" charts/estuary/Chart.yaml
  # The servers, the CLI and every shaded client jar (what make-dist.sh copies), with what they need.
  modules=master,worker,cli,client-mr-shaded
  for m in client-spark/*-shaded*; do modules=$modules,$m; done
  build/make-dist.sh -pl "$modules" -am >&2
)
mv "$src/dist" "$cache/dist"
git worktree remove --force "$src"
echo "previous-release: $version built in $(($(date +%s) - t0)) s" >&2
echo "$cache/dist"
