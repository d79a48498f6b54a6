#!/usr/bin/env python3
"""Turns a pod template rendered by the Helm chart into a shell command line, for build/check-deploy.sh to start
the server on this machine the way its container would (without Kubernetes or Docker).

Usage: pod_command.py RENDERED.yaml KIND NAME POD_NAME
       pod_command.py --names FILE      (prints FILE with the cluster DNS names mapped as below)

Prints, for the workload's first container, `export VAR='value'` lines for its environment (fieldRefs resolved
as the kubelet would for pod POD_NAME on this machine: metadata.name to POD_NAME, status.hostIP and
status.podIP to 127.0.0.1; $(VAR) references expanded in order), then `ARGS='...'` (the container's args, which
the image's entrypoint `sbin/estuary-daemon.sh run` takes), then lines `PROBE_<kind>=port path` for its HTTP
probes, and `GRACE=<terminationGracePeriodSeconds>`.

Each pod's stable DNS name <pod>-<N>.<service>.<namespace>.svc.<domain> becomes a loopback address of its own,
127.0.<service: 1 for masters, 2 for workers>.<10 + N>, so that several masters or workers with the same ports
run side by side as they would on separate pods (Linux routes all of 127.0.0.0/8 to the loopback interface).
"""
import re
import shlex
import sys

import yaml

POD_DNS = re.compile(r"[a-z0-9-]+-(\d+)\.([a-z0-9-]+)\.[a-z0-9-]+\.svc\.[a-z0-9-]+(?:\.[a-z0-9-]+)*")


def loopback_names(text):
    def address(m):
        service = 1 if m.group(2).endswith("master-hl") else 2
        return f"127.0.{service}.{10 + int(m.group(1))}"
    return POD_DNS.sub(address, text)


def main(rendered, kind, name, pod_name):
    with open(rendered, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    matches = [d for d in docs if d.get("kind") == kind and d["metadata"]["name"] == name]
    if not matches:
        sys.exit(f"no {kind} {name} in {rendered}")
    pod = matches[0]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    field_values = {"metadata.name": pod_name, "status.hostIP": "127.0.0.1", "status.podIP": "127.0.0.1"}
    env = {}
    for e in container.get("env", []):
        if "valueFrom" in e:
            value = field_values[e["valueFrom"]["fieldRef"]["fieldPath"]]
        else:
            value = re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), e.get("value", ""))
        env[e["name"]] = loopback_names(value)
    for k, v in env.items():
        print(f"export {k}={shlex.quote(v)}")
    print(f"ARGS={shlex.quote(' '.join(container.get('args', [])))}")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        http = container.get(probe, {}).get("httpGet")
        if http:
            port = ports.get(http["port"], http["port"])
            print(f"PROBE_{probe}=" + shlex.quote(f"{port} {http['path']}"))
    print(f"GRACE={pod.get('terminationGracePeriodSeconds', 30)}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--names":
        with open(sys.argv[2], encoding="utf-8") as f:
            sys.stdout.write(loopback_names(f.read()))
        sys.exit(0)
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
