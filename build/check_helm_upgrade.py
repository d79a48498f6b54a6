#!/usr/bin/env python3
"""Compares two renderings of the chart, the previous release's and this tree's, for build/check-deploy.sh.

Usage: check_helm_upgrade.py OLD.yaml NEW.yaml

`helm upgrade` from OLD to NEW must be a rolling update that keeps the cluster serving and its data:
- every workload, Service, Secret and PersistentVolumeClaim of OLD is still rendered (helm deletes what is gone);
- fields Kubernetes refuses to change stay equal: a workload's selector, a StatefulSet's serviceName,
  podManagementPolicy and volumeClaimTemplates, a Service's clusterIP when it is headless;
- the masters' and workers' volumes keep their names and mount paths (Raft log and snapshots, partition files);
- workloads update by RollingUpdate, one pod at a time, and both roles have a PodDisruptionBudget; the masters'
  lets no more of them go than leaves a Raft quorum, so the group keeps serving through the upgrade and node drains;
- a master has time to hand its Raft leadership over before it is killed (grace period of at least 10 s: a master
  transfers leadership on SIGTERM, waiting up to 5 s).

Prints what changes between the two (objects added, removed, and the changed field paths of the others) and exits
1 with one line per broken rule.
Needs PyYAML.
"""
import sys

import yaml

WORKLOADS = ("StatefulSet", "DaemonSet", "Deployment")
KEPT_KINDS = WORKLOADS + ("Service", "Secret", "PersistentVolumeClaim")
MIN_MASTER_GRACE_S = 10


def load(path):
    with open(path) as f:
        return {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(f) if o}


def component(obj):
    return obj["metadata"].get("labels", {}).get("app.kubernetes.io/component", "")


def changed_paths(a, b, path=""):
    """The leaf paths where two parsed YAML trees differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            out += changed_paths(a.get(k), b.get(k), f"{path}.{k}" if path else str(k))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += changed_paths(x, y, f"{path}[{i}]")
        return out
    return [] if a == b else [path]


def mounts(workload):
    """Volume name -> mount path, over the pod's containers."""
    spec = workload["spec"]["template"]["spec"]
    return {m["name"]: m["mountPath"] for c in spec.get("containers", []) for m in c.get("volumeMounts", [])}


def check(old, new):
    errors = []
    for key in sorted(old):
        kind, name = key
        if kind in KEPT_KINDS and key not in new:
            errors.append(f"{kind} {name} is no longer rendered: helm upgrade would delete it")
    for key in sorted(set(old) & set(new)):
        kind, name = key
        o, n = old[key], new[key]
        if kind in WORKLOADS:
            if o["spec"].get("selector") != n["spec"].get("selector"):
                errors.append(f"{kind} {name}: spec.selector changed (immutable)")
            if kind == "StatefulSet":
                for field in ("serviceName", "podManagementPolicy", "volumeClaimTemplates"):
                    if o["spec"].get(field) != n["spec"].get(field):
                        errors.append(f"{kind} {name}: spec.{field} changed (immutable)")
            om, nm = mounts(o), mounts(n)
            for vol, path in sorted(om.items()):
                if vol == "conf":
                    continue
                if nm.get(vol) != path:
                    errors.append(f"{kind} {name}: volume {vol} mounted at {path} before, {nm.get(vol)} now")
        if kind == "Service" and o["spec"].get("clusterIP") == "None" and n["spec"].get("clusterIP") != "None":
            errors.append(f"Service {name}: no longer headless (spec.clusterIP is immutable)")
    errors += rollout_rules(new)
    return errors


def rollout_rules(objs):
    errors = []
    pdbs = [o for (k, _), o in objs.items() if k == "PodDisruptionBudget"]
    for (kind, name), o in sorted(objs.items()):
        if kind not in WORKLOADS:
            continue
        strategy = o["spec"].get("updateStrategy") or o["spec"].get("strategy") or {}
        if strategy.get("type") != "RollingUpdate":
            errors.append(f"{kind} {name}: update strategy {strategy.get('type')}, not RollingUpdate")
        unavailable = (strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1)
        if unavailable != 1:
            errors.append(f"{kind} {name}: rolling update takes {unavailable} pods down at once, not 1")
        role = component(o)
        budget = [p for p in pdbs if component(p) == role]
        replicas = o["spec"].get("replicas", 1)
        if not budget:
            errors.append(f"{kind} {name}: no PodDisruptionBudget for the {role}s")
        elif role == "master" and replicas > 1:
            down = budget[0]["spec"].get("maxUnavailable")
            quorum = replicas // 2 + 1
            if not isinstance(down, int) or replicas - down < quorum:
                errors.append(f"PodDisruptionBudget {budget[0]['metadata']['name']}: maxUnavailable {down} of"
                              f" {replicas} masters can break the Raft quorum of {quorum}")
        if role == "master":
            grace = o["spec"]["template"]["spec"].get("terminationGracePeriodSeconds", 30)
            if grace < MIN_MASTER_GRACE_S:
                errors.append(f"{kind} {name}: grace period {grace} s leaves no time to hand Raft leadership over")
    return errors


def main(old_path, new_path):
    old, new = load(old_path), load(new_path)
    for key in sorted(set(new) - set(old)):
        print(f"   added   {key[0]} {key[1]}")
    for key in sorted(set(old) - set(new)):
        print(f"   removed {key[0]} {key[1]}")
    for key in sorted(set(old) & set(new)):
        paths = changed_paths(old[key], new[key])
        if paths:
            shown = ", ".join(paths[:6]) + (f" and {len(paths) - 6} more" if len(paths) > 6 else "")
            print(f"   changed {key[0]} {key[1]}: {shown}")
    errors = check(old, new)
    for e in errors:
        print(f"   BROKEN  {e}")
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
