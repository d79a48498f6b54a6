#!/usr/bin/env python3
"""Where one process's CPU went, from async-profiler's collapsed stacks (bench/profile.sh): the share of CPU samples
per thread group, the share spent in the kernel, the top frames by self time (the frame on top of the stack) and the
top Estuary and Netty frames by inclusive time (anywhere on the stack).

Collapsed stacks are one line per distinct stack, "root;...;leaf COUNT", recorded with the `threads` option so that
the root frame is the thread ("[name tid=N]"). Kernel frames end in "_[k]" (present when perf events are allowed).

Usage: bench/stack-top.py LABEL FILE.collapsed [TOP]
"""
import collections
import re
import sys

label, path = sys.argv[1], sys.argv[2]
top = int(sys.argv[3]) if len(sys.argv) > 3 else 15
OURS = ("io/estuary/", "io.estuary.", "org/apache/spark/shuffle/estuary/", "io/netty/", "io.netty.")


def thread_group(frame):
    # "[Executor task launch worker for task 12.0 in stage 3.0 (TID 40) tid=123]" -> "Executor task launch worker"
    name = re.sub(r"\s*tid=\d+\]$", "", frame.strip("[]"))
    name = re.sub(r" for task .*", "", name)
    return re.sub(r"[-#\s]*\d+([-.]\d+)*$", "", name) or name


def readable(frame):
    return frame.replace("/", ".")


samples = 0
kernel = 0
self_time = collections.Counter()
inclusive = collections.Counter()
threads = collections.Counter()
with open(path) as f:
    for line in f:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = stack.split(";")
        if frames[0].startswith("[") and "tid=" in frames[0]:
            threads[thread_group(frames[0])] += n
            frames = frames[1:]
        if not frames:
            continue
        samples += n
        leaf = frames[-1]
        if leaf.endswith("_[k]"):
            kernel += n
        self_time[readable(leaf)] += n
        for frame in set(frames):
            if frame.startswith(OURS) or "netty" in frame:
                inclusive[readable(frame)] += n

if samples == 0:
    print("%s: no CPU samples" % label)
    sys.exit(0)
print("%s: %d CPU samples, %.1f%% of them in the kernel" % (label, samples, 100.0 * kernel / samples))
print("  threads:")
for name, n in threads.most_common(8):
    print("    %5.1f%%  %s" % (100.0 * n / samples, name))
print("  top frames by self time:")
for frame, n in self_time.most_common(top):
    print("    %5.1f%%  %s" % (100.0 * n / samples, frame))
print("  top Estuary and Netty frames by inclusive time:")
for frame, n in inclusive.most_common(top):
    print("    %5.1f%%  %s" % (100.0 * n / samples, frame))
