#!/usr/bin/env python3
"""Where one process's threads waited, from async-profiler's wall-clock collapsed stacks (bench/profile.sh with
PROFILE_EVENT=wall): the seconds each thread group spent blocked (parked on a futex) under an Estuary call chain,
largest first, named by the innermost Estuary frames. Idle waits outside Estuary's code (a pool thread waiting for
work, an event loop in epoll) are left out: what remains is time a task or a driver thread waited on Estuary (a
registration, an acknowledgement, a commit, a fetch).

Samples are converted to seconds with the profiling interval (PROFILE_INTERVAL, 1ms by default here).

Usage: bench/wait-top.py LABEL FILE.collapsed [INTERVAL_MS] [TOP]
"""
import collections
import re
import sys

label, path = sys.argv[1], sys.argv[2]
interval_ms = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
top = int(sys.argv[4]) if len(sys.argv) > 4 else 12
WAITS = ("__futex_abstimed_wait_common", "__futex_wait", "futex_wait")


def thread_group(frame):
    name = re.sub(r"\s*tid=\d+$", "", frame.strip("[]"))
    name = re.sub(r" for task .*", "", name)
    return re.sub(r"[-#\s]*\d+([-.]\d+)*$", "", name) or name


def short(frame):
    return frame.replace("/", ".").split(".")[-2] + "." + frame.replace("/", ".").split(".")[-1]


waits = collections.Counter()
with open(path) as f:
    for line in f:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if not frames or not frames[-1].startswith(WAITS):
            continue
        ours = [
            x
            for x in frames[1:]
            if ("io/estuary/" in x or "io.estuary." in x) and "shaded" not in x and "Lambda" not in x and "0x0" not in x
        ]
        if not ours:
            continue
        chain = " <- ".join(short(x) for x in reversed(ours[-3:]))
        waits[(thread_group(frames[0]), chain)] += int(count)

print(f"{label}: seconds blocked under Estuary calls, by thread group and call chain")
for (group, chain), n in waits.most_common(top):
    print(f"  {n * interval_ms / 1000:7.2f} s  {group}: {chain}")
