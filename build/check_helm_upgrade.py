#!/usr/bin/env python3
"""Compares two renderings of the chart, the previous release's and this tree's, for build/check-deploy.sh.

Usage: check_helm_upgrade.py OLD.yaml NEW.yaml [CHART_DIR]

`helm upgrade` from OLD to NEW must be a rolling update that keeps the cluster serving and its data:
- every workload, Service, Secret and PersistentVolumeClaim of OLD is still rendered (helm deletes what is gone);
- fields Kubernetes refuses to change stay equal: a workload's selector, a StatefulSet's serviceName,
  podManagementPolicy and volumeClaimTemplates, a Service's clusterIP when it is headless;
- the masters' and workers' volumes keep their names and mount paths (Raft log and snapshots, partition files);
- workloads update by RollingUpdate, one pod at a time, and both roles have a PodDisruptionBudget; the masters'
  lets no more of them go than leaves a Raft quorum, so the group keeps serving through the upgrade and node drains;
- a master has time to hand its Raft leadership over before it is killed (grace period of at least 10 s: a master
  transfers leadership on SIGTERM, waiting up to 5 s);
- servers keep their cluster secret (estuary.auth.cluster.secretFile): the file is on a volume the server mounts
  read-only, the Secret it comes from keeps its name across the upgrade (another name is another secret: upgraded
  servers would refuse the others), and a Secret the chart makes carries helm.sh/resource-policy: keep. A rendering
  cannot show `lookup` at work (helm template sees no cluster), so with CHART_DIR the template that makes such a
  Secret must take its value from a lookup of the Secret already in the cluster.

Prints what changes between the two (objects added, removed, and the changed field paths of the others) and exits
1 with one line per broken rule.
Needs PyYAML.
"""
import sys

import yaml

WORKLOADS = ("StatefulSet", "DaemonSet", "Deployment")
KEPT_KINDS = WORKLOADS + ("Service", "Secret", "PersistentVolumeClaim")
MIN_MASTER_GRACE_S = 10
SECRET_FILE_KEY = "estuary.auth.cluster.secretFile"
KEEP = ("helm.sh/resource-policy", "keep")


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


def conf_of(objs, role):
    """The role's rendered estuary-defaults.conf as a dict (empty when the chart rendered none)."""
    for (kind, _), o in objs.items():
        text = (o.get("data") or {}).get("estuary-defaults.conf") if kind == "ConfigMap" else None
        if text is not None and component(o) == role:
            return dict(line.split(None, 1) for line in text.splitlines()
                        if line.strip() and not line.startswith("#") and len(line.split(None, 1)) == 2)
    return {}


def secret_volumes(workload):
    """Volume name -> the Secret it mounts."""
    return {v["name"]: v["secret"].get("secretName") for v in workload["spec"]["template"]["spec"].get("volumes", [])
            if "secret" in v}


def init_mounts(workload):
    """Volume name -> mount path, over the pod's init containers."""
    spec = workload["spec"]["template"]["spec"]
    return {m["name"]: m["mountPath"] for c in spec.get("initContainers", []) for m in c.get("volumeMounts", [])}


def cluster_secret_rules(old, new):
    errors = []
    for (kind, name), n in sorted(new.items()):
        if kind not in WORKLOADS:
            continue
        path = conf_of(new, component(n)).get(SECRET_FILE_KEY, "").strip()
        if not path:
            continue
        container = n["spec"]["template"]["spec"]["containers"][0]
        holders = [m for m in container.get("volumeMounts", []) if path.startswith(m["mountPath"].rstrip("/") + "/")]
        if not holders:
            errors.append(f"{kind} {name}: {SECRET_FILE_KEY} {path} is on no volume the server mounts")
        elif not holders[0].get("readOnly"):
            errors.append(f"{kind} {name}: the volume holding {path} is mounted writable")
        secrets = secret_volumes(n)
        # The Secrets the pod's containers (the init container copying it included) read the cluster secret from.
        sources = {secrets[v] for v in set(init_mounts(n)) | {m["name"] for m in container.get("volumeMounts", [])}
                   if v in secrets}
        if not sources:
            errors.append(f"{kind} {name}: {SECRET_FILE_KEY} is set but no Secret is mounted to provide it")
        for secret in sorted(sources):
            made = new.get(("Secret", secret))
            if made is not None and (made["metadata"].get("annotations") or {}).get(KEEP[0]) != KEEP[1]:
                errors.append(f"Secret {secret}: made by the chart without {KEEP[0]}: {KEEP[1]}")
        o = old.get((kind, name))
        if o is None:
            continue
        for vol, was in sorted(secret_volumes(o).items()):
            now = secrets.get(vol)
            if now is not None and now != was:
                errors.append(f"{kind} {name}: volume {vol} mounts Secret {now}, {was} before: another cluster secret")
        was_path = conf_of(old, component(o)).get(SECRET_FILE_KEY, "").strip()
        if was_path and was_path != path:
            errors.append(f"{kind} {name}: {SECRET_FILE_KEY} moved from {was_path} to {path}")
    return errors


def lookup_rules(new, chart_dir):
    """Each Secret the chart keeps must be made by a template that reuses the value already in the cluster."""
    import glob
    import os
    import re
    errors = []
    kept = [n for (k, n), o in new.items()
            if k == "Secret" and (o["metadata"].get("annotations") or {}).get(KEEP[0]) == KEEP[1]]
    if not kept:
        return errors
    templates = [open(f, encoding="utf-8").read() for f in glob.glob(os.path.join(chart_dir, "templates", "*.yaml"))]
    makers = [t for t in templates if re.search(r"^kind: Secret$", t, re.M) and KEEP[0] in t]
    if not makers:
        errors.append(f"Secrets {', '.join(kept)} are kept, but no template of {chart_dir} makes a kept Secret")
    for t in makers:
        looked = re.search(r'(\$\w+) := lookup "v1" "Secret" \.Release\.Namespace', t)
        if not looked or not re.search(r"index " + re.escape(looked.group(1)) + r"\.data", t):
            errors.append(f"a template of {chart_dir} makes a kept Secret without reusing the value a lookup finds:"
                          " every upgrade would make a new secret")
    return errors


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
    errors += cluster_secret_rules(old, new)
    return list(dict.fromkeys(errors))


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


def main(old_path, new_path, chart_dir=None):
    old, new = load(old_path), load(new_path)
    for key in sorted(set(new) - set(old)):
        print(f"   added   {key[0]} {key[1]}")
    for key in sorted(set(old) - set(new)):
        print(f"   removed {key[0]} {key[1]}")
    for key in sorted(set(old) & set(new)):
        paths = changed_paths(old[key], new[key])
        if key[0] == "Secret" and (new[key]["metadata"].get("annotations") or {}).get(KEEP[0]) == KEEP[1]:
            # A rendering has no cluster to look the live value up in: helm upgrade keeps that value.
            paths = [p for p in paths if not p.startswith("data.")]
        if paths:
            shown = ", ".join(paths[:6]) + (f" and {len(paths) - 6} more" if len(paths) > 6 else "")
            print(f"   changed {key[0]} {key[1]}: {shown}")
    errors = check(old, new)
    if chart_dir:
        errors += lookup_rules(new, chart_dir)
    for e in errors:
        print(f"   BROKEN  {e}")
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
