#!/usr/bin/env bash
# Runs ShellCheck at every severity (errors, warnings, infos, style) over every shell script in the repository: each
# *.sh and the scripts without that suffix in bin/, sbin/, build/, bench/, deploy/, docker/ and .ci/ (found by their
# shebang). A finding whose pattern is intended is disabled on its line, with the reason. Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t scripts < <(
  {
    git ls-files '*.sh'
    git ls-files bin sbin build bench deploy docker .ci | while read -r f; do
      [[ $f == *.sh ]] || head -n 1 "$f" | grep -qE '^#!.*\b(ba|da|k)?sh\b' && echo "$f"
    done
  } | sort -u)
echo "shellcheck $(shellcheck --version | sed -n 2p) over ${#scripts[@]} scripts"
shellcheck "${scripts[@]}"
