#!/usr/bin/env python3
"""Prints the package graph of Estuary's production classes and its cycles (strongly connected components).

Usage, after a build: build/package-graph.py common/target/classes network/target/classes ... (any class folders).
The build itself refuses a cycle (each module's LayeringTest); this prints the whole picture for a review.
"""
import subprocess, sys, re, collections
dirs = sys.argv[1:]
edges = collections.defaultdict(set)
for d in dirs:
    out = subprocess.run(["jdeps", "-verbose:package", "-filter:none", d], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s+(\S+)\s+->\s+(\S+)\s", line)
        if not m: continue
        a, b = m.groups()
        if not a.startswith(("io.estuary", "org.apache.spark.shuffle.estuary", "org.apache.spark.sql.estuary")): continue
        if not b.startswith(("io.estuary", "org.apache.spark.shuffle.estuary", "org.apache.spark.sql.estuary")): continue
        if a != b: edges[a].add(b)
nodes = sorted(set(edges) | {b for v in edges.values() for b in v})
# Tarjan
idx, low, st, on, sccs, c = {}, {}, [], set(), [], [0]
def strong(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in sorted(edges.get(v, ())):
        if w not in idx: strong(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        sccs.append(sorted(comp))
sys.setrecursionlimit(10000)
for v in nodes:
    if v not in idx: strong(v)
cyc = [s for s in sccs if len(s) > 1]
print("PACKAGE CYCLES (strongly connected components of size > 1): %d" % len(cyc))
for s in cyc:
    print("  cycle: " + ", ".join(s))
    for a in s:
        for b in sorted(edges.get(a, ())):
            if b in s: print("    %s -> %s" % (a, b))
print()
print("PACKAGE GRAPH (io.estuary production packages; each line: package -> packages it uses)")
for a in nodes:
    print("%s -> %s" % (a, ", ".join(sorted(edges.get(a, ()))) or "(none)"))
