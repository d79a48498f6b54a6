#!/usr/bin/env python3
"""Splits the output of `helm template` for build/check-deploy.sh.

Usage: check_manifests.py RENDERED.yaml OUTDIR

- Kubernetes' own kinds go to OUTDIR/k8s/, one file each, for kubernetes-validate.
- Prometheus Operator objects (monitoring.coreos.com) and cert-manager Certificates (cert-manager.io) are checked
  here against the part of their CRD schema the chart uses, strictly (unknown fields refused): kubernetes-validate
  has no CRD schemas and only warns on them.
- Each ConfigMap's estuary-defaults.conf goes to OUTDIR/conf/<component>-<name>.conf, for Estuary's ConfigCheck
  (and its log4j2.xml beside it, as <component>-<name>.log4j2.xml).

Exits 1 when a monitoring or cert-manager object is malformed or when no master and worker configuration was rendered.
Needs PyYAML and jsonschema (both come with kubernetes-validate).
"""
import os
import sys

import jsonschema
import yaml


def strict(properties, required=()):
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
LABEL_SELECTOR = strict({
    "matchLabels": STRING_MAP,
    "matchExpressions": {"type": "array", "items": strict(
        {"key": {"type": "string"}, "operator": {"type": "string"}, "values": {"type": "array"}},
        ["key", "operator"])},
})
NAMESPACE_SELECTOR = strict({"any": {"type": "boolean"}, "matchNames": {"type": "array", "items": {"type": "string"}}})
DURATION = {"type": "string", "pattern": r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"}
ENDPOINT = {
    "port": {"type": "string"}, "path": {"type": "string"}, "interval": DURATION, "scrapeTimeout": DURATION,
    "scheme": {"type": "string", "enum": ["http", "https"]}, "honorLabels": {"type": "boolean"},
}
METADATA = strict({"name": {"type": "string"}, "namespace": {"type": "string"}, "labels": STRING_MAP,
                   "annotations": STRING_MAP}, ["name"])


def monitor_schema(endpoints_field):
    spec = strict({
        "selector": LABEL_SELECTOR, "namespaceSelector": NAMESPACE_SELECTOR, "jobLabel": {"type": "string"},
        endpoints_field: {"type": "array", "minItems": 1, "items": strict(ENDPOINT)},
    }, ["selector", endpoints_field])
    return strict({"apiVersion": {"const": "monitoring.coreos.com/v1"}, "kind": {"type": "string"},
                   "metadata": METADATA, "spec": spec}, ["apiVersion", "kind", "metadata", "spec"])


GO_DURATION = {"type": "string", "pattern": r"^([0-9]+(\.[0-9]+)?(h|m|s))+$"}
# The cert-manager.io/v1 Certificate fields the chart may use (a subset of the CRD, with their names and types).
CERTIFICATE = strict({
    "apiVersion": {"const": "cert-manager.io/v1"}, "kind": {"const": "Certificate"}, "metadata": METADATA,
    "spec": strict({
        "secretName": {"type": "string", "minLength": 1},
        "duration": GO_DURATION, "renewBefore": GO_DURATION,
        "privateKey": strict({"algorithm": {"enum": ["RSA", "ECDSA", "Ed25519"]}, "size": {"type": "integer"},
                              "encoding": {"enum": ["PKCS1", "PKCS8"]},
                              "rotationPolicy": {"enum": ["Never", "Always"]}}),
        "usages": {"type": "array", "items": {"enum": ["server auth", "client auth", "digital signature",
                                                        "key encipherment"]}},
        "dnsNames": {"type": "array", "minItems": 1, "items": {"type": "string"}},
        "ipAddresses": {"type": "array", "items": {"type": "string"}},
        "issuerRef": strict({"name": {"type": "string", "minLength": 1},
                             "kind": {"enum": ["Issuer", "ClusterIssuer"]}, "group": {"type": "string"}},
                            ["name"]),
    }, ["secretName", "issuerRef"]),
}, ["apiVersion", "kind", "metadata", "spec"])

# Per API group, the kinds the chart may render and the fields they may use; subsets of the CRDs.
CRD_SCHEMAS = {
    "monitoring.coreos.com": {
        "ServiceMonitor": monitor_schema("endpoints"),
        "PodMonitor": monitor_schema("podMetricsEndpoints"),
    },
    "cert-manager.io": {"Certificate": CERTIFICATE},
}


def main(rendered, outdir):
    os.makedirs(os.path.join(outdir, "k8s"), exist_ok=True)
    os.makedirs(os.path.join(outdir, "conf"), exist_ok=True)
    errors = []
    roles = set()
    with open(rendered, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for i, doc in enumerate(docs):
        kind, name = doc.get("kind"), doc.get("metadata", {}).get("name")
        api = doc.get("apiVersion", "")
        group = api.split("/")[0] if "/" in api else ""
        if group in CRD_SCHEMAS:
            schema = CRD_SCHEMAS[group].get(kind)
            if schema is None:
                errors.append(f"{kind} {name}: no schema for this {group} kind")
                continue
            for e in jsonschema.Draft7Validator(schema).iter_errors(doc):
                errors.append(f"{kind} {name}: {'.'.join(map(str, e.absolute_path))}: {e.message}")
            print(f"checked {kind} {name} against its CRD fields")
            continue
        with open(os.path.join(outdir, "k8s", f"{i:02d}-{kind}-{name}.yaml"), "w", encoding="utf-8") as out:
            yaml.safe_dump(doc, out)
        conf = (doc.get("data") or {}).get("estuary-defaults.conf") if kind == "ConfigMap" else None
        if conf is not None:
            role = doc["metadata"].get("labels", {}).get("app.kubernetes.io/component", "unknown")
            roles.add(role)
            with open(os.path.join(outdir, "conf", f"{role}-{name}.conf"), "w", encoding="utf-8") as out:
                out.write(conf)
            log4j2 = doc["data"].get("log4j2.xml")
            if log4j2 is not None:
                with open(os.path.join(outdir, "conf", f"{role}-{name}.log4j2.xml"), "w", encoding="utf-8") as out:
                    out.write(log4j2)
    for role in ("master", "worker"):
        if role not in roles:
            errors.append(f"no {role} estuary-defaults.conf rendered")
    for e in errors:
        print(f"{rendered}: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
