#!/usr/bin/env python3
"""Where one JVM's CPU went, from a JFR recording (bench/profile.sh): the share of execution samples per thread group,
the top frames by self time (the method on top of the stack) and the top Estuary and Netty frames by inclusive time
(anywhere on the stack). Reads `jfr print --events jdk.ExecutionSample` output on stdin.

Usage: jfr print --events jdk.ExecutionSample --stack-depth 96 FILE.jfr | bench/jfr-top.py LABEL [TOP]
"""
import collections
import re
import sys

label = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 15

FRAME = re.compile(r"^\s+([\w$.<>]+)\(.*\)\s+line:")
THREAD = re.compile(r'sampledThread = "([^"]*)"')


def thread_group(name):
    # "Executor task launch worker for task 12.0 in stage 3.0 (TID 40)" -> "Executor task launch worker"
    name = re.sub(r" for task .*", "", name)
    return re.sub(r"[-#\s]*\d+([-.]\d+)*$", "", name) or name


samples = 0
self_time = collections.Counter()
inclusive = collections.Counter()
threads = collections.Counter()
stack = []
thread = None
for line in sys.stdin:
    m = THREAD.search(line)
    if m:
        thread = thread_group(m.group(1))
        continue
    m = FRAME.match(line)
    if m:
        stack.append(m.group(1))
        continue
    if line.startswith("}") and stack:
        samples += 1
        self_time[stack[0]] += 1
        for frame in set(stack):
            if frame.startswith(("io.estuary.", "org.apache.spark.shuffle.estuary.", "io.netty.")) or ".netty." in frame:
                inclusive[frame] += 1
        threads[thread] += 1
        stack = []

if samples == 0:
    print("%s: no execution samples" % label)
    sys.exit(0)
print("%s: %d execution samples" % (label, samples))
print("  threads:")
for name, n in threads.most_common(8):
    print("    %5.1f%%  %s" % (100.0 * n / samples, name))
print("  top frames by self time:")
for frame, n in self_time.most_common(top):
    print("    %5.1f%%  %s" % (100.0 * n / samples, frame))
print("  top Estuary and Netty frames by inclusive time:")
for frame, n in inclusive.most_common(top):
    print("    %5.1f%%  %s" % (100.0 * n / samples, frame))
