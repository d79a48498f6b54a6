#!/usr/bin/env bash
# Fails when a shaded client jar holds a class outside Estuary's own packages: io/estuary/ (where the relocated
# third-party classes live too, under io/estuary/shaded/) and the estuary packages the Spark adapter must place
# inside Spark's namespace (org/apache/spark/.../estuary/). A library class left at its original name would clash
# with the engine's or the user's copy of that library. Resources outside them (e.g. protobuf's .proto files) are
# listed but allowed: nothing loads them by class name. Also fails when the jar holds server-only Estuary classes
# (master, worker, server-common, CLI, the master's log and snapshot messages of master_log.proto): a client needs
# none of them, so one there means a module boundary leaked. Run by the build of every *-shaded module (package
# phase, after the shade plugin); usage: check-shaded-jar.sh JAR.
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 JAR" >&2
  exit 2
fi
jar_file=$1
jar_tool=${JAVA_HOME:+$JAVA_HOME/bin/}jar
entries=$("$jar_tool" tf "$jar_file")
ours='^(io/estuary/|org/apache/spark/([a-z0-9_]+/)*estuary/|META-INF/)'
strays=$(grep '\.class$' <<<"$entries" | grep -E -v "$ours" || true)
if [[ -n $strays ]]; then
  echo "$jar_file holds $(wc -l <<<"$strays") classes outside Estuary's packages (relocate or exclude them):" >&2
  head -n 20 <<<"$strays" >&2
  exit 1
fi
# master_log.proto's messages all hang off its outer class MasterLog (their descriptors), in whatever package.
server_only='^io/estuary/(master|worker|server|cli)/|^io/estuary/([a-z0-9_]+/)*MasterLog(\$.*)?\.class$'
leaks=$(grep '\.class$' <<<"$entries" | grep -E "$server_only" || true)
if [[ -n $leaks ]]; then
  echo "$jar_file holds $(wc -l <<<"$leaks") server-only Estuary classes (a client module depends on a server one?):" >&2
  head -n 20 <<<"$leaks" >&2
  exit 1
fi
resources=$(grep -v -e '/$' -e '\.class$' <<<"$entries" | grep -E -v "$ours" || true)
echo "$jar_file: $(grep -c '\.class$' <<<"$entries") classes, all in Estuary's packages, none server-only" \
  "(resources outside them: ${resources//$'\n'/ })"
