#!/usr/bin/env bash
# Starts an Estuary master on this machine. See estuary-daemon.sh for the environment it reads.
exec "$(dirname "$0")/estuary-daemon.sh" start master
