{{/* Names. */}}
{{- define "estuary.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "estuary.master.name" -}}{{ include "estuary.fullname" . }}-master{{- end -}}
{{- define "estuary.worker.name" -}}{{ include "estuary.fullname" . }}-worker{{- end -}}
{{/* Headless services: they give each pod of the StatefulSets its stable DNS name. */}}
{{- define "estuary.master.headless" -}}{{ include "estuary.fullname" . }}-master-hl{{- end -}}
{{- define "estuary.worker.headless" -}}{{ include "estuary.fullname" . }}-worker-hl{{- end -}}

{{- define "estuary.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "estuary.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "estuary.labels" -}}
{{ include "estuary.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The DNS domain of the headless services: <service>.<namespace>.svc.<cluster domain>. */}}
{{- define "estuary.master.domain" -}}
{{ include "estuary.master.headless" . }}.{{ .Release.Namespace }}.svc.{{ .Values.clusterDomain }}
{{- end -}}
{{- define "estuary.worker.domain" -}}
{{ include "estuary.worker.headless" . }}.{{ .Release.Namespace }}.svc.{{ .Values.clusterDomain }}
{{- end -}}

{{- define "estuary.master.replicas" -}}
{{- $n := int .Values.master.replicas -}}
{{- if not (has $n (list 1 3 5)) -}}
{{- fail (printf "master.replicas must be 1, 3 or 5 (a Raft group tolerates 1 or 2 failures), not %v" .Values.master.replicas) -}}
{{- end -}}
{{- $n -}}
{{- end -}}

{{/* Every master's rpc endpoint (host:port), comma-separated: estuary.master.endpoints for workers and clients. */}}
{{- define "estuary.master.endpoints" -}}
{{- $eps := list -}}
{{- range $i := until (int (include "estuary.master.replicas" .)) -}}
{{- $eps = append $eps (printf "%s-%d.%s:%d" (include "estuary.master.name" $) $i (include "estuary.master.domain" $) (int $.Values.master.ports.rpc)) -}}
{{- end -}}
{{- join "," $eps -}}
{{- end -}}

{{/* estuary.master.ha.nodes: id=host:rpcPort:raftPort per master, the pod name as id. */}}
{{- define "estuary.master.haNodes" -}}
{{- $nodes := list -}}
{{- range $i := until (int (include "estuary.master.replicas" .)) -}}
{{- $pod := printf "%s-%d" (include "estuary.master.name" $) $i -}}
{{- $nodes = append $nodes (printf "%s=%s.%s:%d:%d" $pod $pod (include "estuary.master.domain" $) (int $.Values.master.ports.rpc) (int $.Values.master.ports.raft)) -}}
{{- end -}}
{{- join "," $nodes -}}
{{- end -}}

{{/* Mount path of a worker disk. */}}
{{- define "estuary.worker.diskPath" -}}/data/{{ .name }}{{- end -}}

{{/*
Renders a dict of estuary keys as estuary-defaults.conf ("key value" per line, sorted). Takes
(dict "generated" <dict> "user" (list <map>...) "reserved" (list <key>...)): keys of the user maps override
generated ones, except reserved keys, which the chart derives and refuses to take from the user.
*/}}
{{- define "estuary.conf" -}}
{{- $conf := deepCopy .generated -}}
{{- range $m := .user -}}
{{- range $k, $v := $m -}}
{{- if has $k $.reserved -}}
{{- fail (printf "%s is derived by the chart from its values (ports, replicas, disks, auth, tls); do not set it under config" $k) -}}
{{- end -}}
{{- if kindIs "float64" $v -}}
{{- if ne (float64 (int64 $v)) $v -}}
{{- $_ := set $conf $k (toString $v) -}}
{{- else -}}
{{- $_ := set $conf $k (printf "%d" (int64 $v)) -}}
{{- end -}}
{{- else -}}
{{- $_ := set $conf $k (toString $v) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $k, $v := $conf }}
{{ $k }} {{ $v }}
{{- end }}
{{- end -}}

{{/* The Secret holding the cluster secret (key cluster.secret): the operator's, or the one the chart makes. */}}
{{- define "estuary.auth.secretName" -}}
{{- .Values.auth.existingSecret | default (printf "%s-cluster-secret" (include "estuary.fullname" .)) -}}
{{- end -}}

{{/* Where servers read the cluster secret: an in-memory copy only the server's user may read (see the init container). */}}
{{- define "estuary.auth.secretFile" -}}/etc/estuary/auth/cluster.secret{{- end -}}

{{/* Where the TLS Secret (tls.crt, tls.key, ca.crt: cert-manager's names) is mounted. */}}
{{- define "estuary.tls.dir" -}}/etc/estuary/tls{{- end -}}
{{- define "estuary.tls.secretName" -}}
{{- .Values.tls.existingSecret | default (printf "%s-tls" (include "estuary.fullname" .)) -}}
{{- end -}}

{{/* Checks the auth and tls values once (every template that uses them calls this). */}}
{{- define "estuary.security.check" -}}
{{- if not (has .Values.auth.mode (list "enforce" "permissive")) -}}
{{- fail "auth.mode must be enforce or permissive" -}}
{{- end -}}
{{- if and .Values.tls.enabled (not .Values.tls.existingSecret) (not .Values.tls.certManager.issuerRef.name) -}}
{{- fail "tls.enabled needs tls.existingSecret (a Secret with tls.crt, tls.key and ca.crt) or tls.certManager.issuerRef.name (the chart then asks cert-manager for the certificate)" -}}
{{- end -}}
{{- if and .Values.tls.admin (not .Values.tls.enabled) -}}
{{- fail "tls.admin (HTTPS on the admin ports) uses the servers' certificate: set tls.enabled too" -}}
{{- end -}}
{{- end -}}

{{/* The authentication and TLS keys of masters and workers, set into the dict given as .conf. */}}
{{- define "estuary.security.conf" -}}
{{- $v := .root.Values -}}
{{- include "estuary.security.check" .root -}}
{{- $_ := set .conf "estuary.auth.enabled" (toString $v.auth.enabled) -}}
{{- if $v.auth.enabled -}}
{{- $_ := set .conf "estuary.auth.mode" $v.auth.mode -}}
{{- $_ := set .conf "estuary.auth.cluster.secretFile" (include "estuary.auth.secretFile" .root) -}}
{{- end -}}
{{- if $v.tls.enabled -}}
{{- $dir := include "estuary.tls.dir" .root -}}
{{- range $group := list "internal" "data" -}}
{{- $_ := set $.conf (printf "estuary.tls.%s.enabled" $group) "true" -}}
{{- $_ := set $.conf (printf "estuary.tls.%s.certFile" $group) (printf "%s/tls.crt" $dir) -}}
{{- $_ := set $.conf (printf "estuary.tls.%s.keyFile" $group) (printf "%s/tls.key" $dir) -}}
{{- $_ := set $.conf (printf "estuary.tls.%s.trustFile" $group) (printf "%s/ca.crt" $dir) -}}
{{- $_ := set $.conf (printf "estuary.tls.%s.clientAuth" $group) (toString $v.tls.clientAuth) -}}
{{- end -}}
{{- if $v.tls.admin -}}
{{- $_ := set $.conf "estuary.tls.admin.enabled" "true" -}}
{{- $_ := set $.conf "estuary.tls.admin.certFile" (printf "%s/tls.crt" $dir) -}}
{{- $_ := set $.conf "estuary.tls.admin.keyFile" (printf "%s/tls.key" $dir) -}}
{{- $_ := set $.conf "estuary.tls.admin.trustFile" (printf "%s/ca.crt" $dir) -}}
{{- $_ := set $.conf "estuary.tls.admin.clientAuth" "false" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* HTTP or HTTPS: how probes and scrapers reach the admin ports. */}}
{{- define "estuary.admin.scheme" -}}
{{- if and .Values.tls.enabled .Values.tls.admin -}}HTTPS{{- else -}}HTTP{{- end -}}
{{- end -}}

{{/* A scrape endpoint's TLS settings when the admin ports speak HTTPS: trust the chart's CA. Every server presents
the one certificate, whose names are wildcards under the headless services: the scraper (which connects by pod IP)
checks it against a name under the masters' service. */}}
{{- define "estuary.admin.scrapeTls" -}}
{{- if eq (include "estuary.admin.scheme" .) "HTTPS" -}}
scheme: https
tlsConfig:
  ca:
    secret:
      name: {{ include "estuary.tls.secretName" . }}
      key: ca.crt
  serverName: scrape.{{ include "estuary.master.domain" . }}
{{- end }}
{{- end -}}

{{/* Keys that estuary.security.conf derives from the auth and tls values: not to be set under config. */}}
{{- define "estuary.security.reserved" -}}
{{- $keys := list "estuary.auth.enabled" "estuary.auth.mode" "estuary.auth.cluster.secretFile" -}}
{{- range $group := list "internal" "data" "admin" -}}
{{- range $k := list "enabled" "certFile" "keyFile" "trustFile" "clientAuth" -}}
{{- $keys = append $keys (printf "estuary.tls.%s.%s" $group $k) -}}
{{- end -}}
{{- end -}}
{{- join "," $keys -}}
{{- end -}}

{{/*
The pod parts that give a server its cluster secret and TLS files: volumeMounts (include with "mounts") or volumes
(with "volumes"), or the init container (with "init"). Takes (dict "root" $ "part" <which>).
A Secret volume's files belong to root and, when the pod has an fsGroup (the chart's default), are readable by that
group whatever defaultMode says; a server refuses a cluster secret that anyone but its own user may read. So an init
container, running as the server's user, copies the secret into a memory-backed emptyDir with mode 0400, and the
server mounts only that copy, read-only.
*/}}
{{- define "estuary.security.pod" -}}
{{- $v := .root.Values -}}
{{- if eq .part "init" }}
{{- if $v.auth.enabled }}
- name: cluster-secret
  image: {{ include "estuary.image" .root }}
  imagePullPolicy: {{ $v.image.pullPolicy }}
  command: ["sh", "-c", "install -m 0400 /etc/estuary/cluster-secret/cluster.secret {{ include "estuary.auth.secretFile" .root }}"]
  resources:
    requests:
      cpu: 10m
      memory: 16Mi
    limits:
      memory: 16Mi
  volumeMounts:
    - name: cluster-secret
      mountPath: /etc/estuary/cluster-secret
      readOnly: true
    - name: auth
      mountPath: /etc/estuary/auth
{{- end }}
{{- else if eq .part "mounts" }}
{{- if $v.auth.enabled }}
- name: auth
  mountPath: /etc/estuary/auth
  readOnly: true
{{- end }}
{{- if $v.tls.enabled }}
- name: tls
  mountPath: {{ include "estuary.tls.dir" .root }}
  readOnly: true
{{- end }}
{{- else if eq .part "volumes" }}
{{- if $v.auth.enabled }}
- name: cluster-secret
  secret:
    secretName: {{ include "estuary.auth.secretName" .root }}
    items:
      - key: {{ $v.auth.existingSecretKey }}
        path: cluster.secret
    # Owner root, group fsGroup (the init container reads it as a member of that group).
    defaultMode: 0440
- name: auth
  emptyDir:
    medium: Memory
    sizeLimit: 1Mi
{{- end }}
{{- if $v.tls.enabled }}
# The whole folder, not subPath mounts: cert-manager's renewals then reach the running server, which reloads them.
- name: tls
  secret:
    secretName: {{ include "estuary.tls.secretName" .root }}
    defaultMode: 0440
{{- end }}
{{- end }}
{{- end -}}

{{- define "estuary.log4j2" -}}
<?xml version="1.0" encoding="UTF-8"?>
<!-- Estuary servers in containers log to stdout. -->
<Configuration status="WARN" shutdownHook="disable">
  <Appenders>
    <Console name="stdout" target="SYSTEM_OUT">
      <PatternLayout pattern="%d{yyyy-MM-dd HH:mm:ss.SSS} %-5p [%t] %c{1}: %m%n"/>
    </Console>
  </Appenders>
  <Loggers>
    <Logger name="io.estuary" level="{{ .Values.logLevel }}"/>
    <Root level="warn"><AppenderRef ref="stdout"/></Root>
  </Loggers>
</Configuration>
{{- end -}}

{{- define "estuary.master.conf" -}}
{{- $g := dict
  "estuary.master.endpoints" (include "estuary.master.endpoints" .)
  "estuary.master.port" (printf "%d" (int .Values.master.ports.rpc))
  "estuary.master.http.port" (printf "%d" (int .Values.master.ports.http)) -}}
{{- if gt (int (include "estuary.master.replicas" .)) 1 -}}
{{- $_ := set $g "estuary.master.ha.nodes" (include "estuary.master.haNodes" .) -}}
{{- $_ := set $g "estuary.master.ha.dir" "/var/lib/estuary/ratis" -}}
{{- end -}}
{{- include "estuary.security.conf" (dict "root" . "conf" $g) -}}
{{- $reserved := concat (list "estuary.master.endpoints" "estuary.master.port" "estuary.master.http.port" "estuary.master.ha.nodes" "estuary.master.ha.id" "estuary.master.ha.dir" "estuary.master.host") (splitList "," (include "estuary.security.reserved" .)) -}}
{{- include "estuary.conf" (dict "generated" $g "user" (list .Values.config .Values.master.config) "reserved" $reserved) -}}
{{- end -}}

{{- define "estuary.worker.conf" -}}
{{- if not .Values.worker.disks -}}
{{- fail "worker.disks must list at least one disk" -}}
{{- end -}}
{{- $dirs := list -}}
{{- range .Values.worker.disks -}}
{{- $dirs = append $dirs (include "estuary.worker.diskPath" .) -}}
{{- end -}}
{{- $g := dict
  "estuary.master.endpoints" (include "estuary.master.endpoints" .)
  "estuary.worker.storage.dirs" (join "," $dirs)
  "estuary.worker.rpc.port" (printf "%d" (int .Values.worker.ports.rpc))
  "estuary.worker.push.port" (printf "%d" (int .Values.worker.ports.push))
  "estuary.worker.fetch.port" (printf "%d" (int .Values.worker.ports.fetch))
  "estuary.worker.http.port" (printf "%d" (int .Values.worker.ports.http))
  "estuary.worker.memory.maxBuffered" (printf "%dm" (div (int .Values.worker.offHeapMiB) 2)) -}}
{{- include "estuary.security.conf" (dict "root" . "conf" $g) -}}
{{- $reserved := concat (list "estuary.master.endpoints" "estuary.worker.storage.dirs" "estuary.worker.rpc.port" "estuary.worker.push.port" "estuary.worker.fetch.port" "estuary.worker.http.port" "estuary.worker.host") (splitList "," (include "estuary.security.reserved" .)) -}}
{{- include "estuary.conf" (dict "generated" $g "user" (list .Values.config .Values.worker.config) "reserved" $reserved) -}}
{{- end -}}
