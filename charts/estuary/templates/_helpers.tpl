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
{{- fail (printf "%s is derived by the chart from its values (ports, replicas, disks); do not set it under config" $k) -}}
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
{{- $reserved := list "estuary.master.endpoints" "estuary.master.port" "estuary.master.http.port" "estuary.master.ha.nodes" "estuary.master.ha.id" "estuary.master.ha.dir" "estuary.master.host" -}}
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
{{- $reserved := list "estuary.master.endpoints" "estuary.worker.storage.dirs" "estuary.worker.rpc.port" "estuary.worker.push.port" "estuary.worker.fetch.port" "estuary.worker.http.port" "estuary.worker.host" -}}
{{- include "estuary.conf" (dict "generated" $g "user" (list .Values.config .Values.worker.config) "reserved" $reserved) -}}
{{- end -}}
