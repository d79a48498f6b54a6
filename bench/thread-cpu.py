#!/usr/bin/env python3
"""CPU seconds per thread group of one process over a window, from two snapshots of /proc/PID/task taken by
bench/profile.sh (`snapshot`), counted by the kernel, not sampled: user and system time apart, so that the kernel's
share (sockets, page cache) shows per thread. Threads born inside the window count from zero; threads that ended
inside it are missed (their time is in the process total that profile.sh prints).

Usage: bench/thread-cpu.py snapshot PID > FILE
       bench/thread-cpu.py diff LABEL BEFORE AFTER [TOP]
"""
import collections
import os
import re
import subprocess
import sys

TICKS = os.sysconf("SC_CLK_TCK")


def group(name):
    # "estuary-push-3" -> "estuary-push", "GC Thread#1" -> "GC Thread",
    # "Executor task launch worker for task 12.0 in stage 3.0 (TID 40)" -> "Executor task launch worker"
    name = re.sub(r" for task .*", "", name)
    return re.sub(r"[-#\s]*\d+([-.]\d+)*$", "", name) or name


def java_names(pid):
    """Thread id -> the JVM's thread name (the kernel keeps 15 characters of it), from jcmd Thread.print."""
    try:
        dump = subprocess.run(["jcmd", str(pid), "Thread.print"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return {str(int(m.group(2), 16)): m.group(1) for m in re.finditer(r'^"(.*?)".*?nid=(0x[0-9a-f]+)', dump, re.M)}


def snapshot(pid):
    names = java_names(pid)
    for tid in os.listdir("/proc/%s/task" % pid):
        try:
            with open("/proc/%s/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
        except OSError:
            continue  # ended meanwhile
        # The name is in parentheses and may hold spaces; the fields after it are fixed.
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        print("%s\t%s\t%s\t%s" % (tid, fields[11], fields[12], names.get(tid, name)))


def read(path):
    out = {}
    with open(path) as f:
        for line in f:
            tid, utime, stime, name = line.rstrip("\n").split("\t", 3)
            out[tid] = (int(utime), int(stime), name)
    return out


def diff(label, before, after, top):
    b, a = read(before), read(after)
    user = collections.Counter()
    system = collections.Counter()
    for tid, (u, s, name) in a.items():
        u0, s0, _ = b.get(tid, (0, 0, name))
        user[group(name)] += u - u0
        system[group(name)] += s - s0
    total = sum(user.values()) + sum(system.values())
    if total == 0:
        print("%s: no CPU time in the window" % label)
        return
    print("%s: %.1f CPU s in threads alive at the end, %.1f%% of it in the kernel"
          % (label, total / TICKS, 100.0 * sum(system.values()) / total))
    print("    %8s %8s %8s  thread group" % ("CPU s", "user", "system"))
    for name, _ in sorted(user.items(), key=lambda kv: -(kv[1] + system[kv[0]]))[:top]:
        u, s = user[name], system[name]
        print("    %8.1f %8.1f %8.1f  %s" % ((u + s) / TICKS, u / TICKS, s / TICKS, name))


if sys.argv[1] == "snapshot":
    snapshot(sys.argv[2])
else:
    diff(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]) if len(sys.argv) > 5 else 12)
