{{/* The chart's name, and the release's full name (63 characters at most). */}}
{{- define "mcphost.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mcphost.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "mcphost.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels: what the Service, the PDB and the anti-affinity select the gateway's pods by. */}}
{{- define "mcphost.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcphost.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: gateway
{{- end }}

{{/* Labels of every object; the gateway's (mcphost.labels) add its component. */}}
{{- define "mcphost.commonLabels" -}}
helm.sh/chart: {{ include "mcphost.chart" . }}
app.kubernetes.io/name: {{ include "mcphost.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "mcphost.labels" -}}
{{ include "mcphost.commonLabels" . }}
app.kubernetes.io/component: gateway
{{- end }}

{{- define "mcphost.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mcphost.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret with serve-token, session-keys (and redis-password). */}}
{{- define "mcphost.secretName" -}}
{{- default (include "mcphost.fullname" .) .Values.existingSecret }}
{{- end }}

{{/* Where MCPHOST_REDIS_PASSWORD comes from: a Secret name and key. */}}
{{- define "mcphost.redisSecretName" -}}
{{- default (include "mcphost.secretName" .) .Values.redis.existingSecret }}
{{- end }}

{{- define "mcphost.redisSecretKey" -}}
{{- if .Values.redis.existingSecret }}
{{- .Values.redis.existingSecretPasswordKey }}
{{- else }}
{{- "redis-password" }}
{{- end }}
{{- end }}

{{- define "mcphost.redisHost" -}}
{{- if .Values.redis.host }}
{{- .Values.redis.host }}
{{- else if .Values.redis.dev.enabled }}
{{- include "mcphost.redisDevName" . }}
{{- else }}
{{- fail "redis.host is required: the Redis the replicas share their state in (or, to try the chart, --set redis.dev.enabled=true for a single Redis, not HA)" }}
{{- end }}
{{- end }}

{{/* The state block's url: the password is read from the environment, never written in the ConfigMap. */}}
{{- define "mcphost.redisURL" -}}
{{- $scheme := ternary "rediss" "redis" .Values.redis.tls.enabled }}
{{- $auth := ternary `:${env("MCPHOST_REDIS_PASSWORD")}@` "" .Values.redis.auth }}
{{- printf "%s://%s%s:%d/%d" $scheme $auth (include "mcphost.redisHost" .) (int .Values.redis.port) (int .Values.redis.db) }}
{{- end }}

{{- define "mcphost.redisTLSDir" -}}/etc/mcphost-redis-tls{{- end }}

{{/* The single Redis's name (redis.dev). */}}
{{- define "mcphost.redisDevName" -}}
{{- printf "%s-redis" (include "mcphost.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The Secret with the Redis TLS files the gateway mounts: redis.tls.secretName, or the
     certificate the chart makes for redis.dev; "" when none (or no TLS). */}}
{{- define "mcphost.redisTLSSecret" -}}
{{- if .Values.redis.tls.enabled }}
{{- if .Values.redis.tls.secretName }}
{{- .Values.redis.tls.secretName }}
{{- else if .Values.redis.dev.enabled }}
{{- printf "%s-tls" (include "mcphost.redisDevName" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The ConfigMap with the CA of the single Redis's certificate (redis.dev), which
     the gateway mounts instead of the Secret with the Redis's private key. */}}
{{- define "mcphost.redisDevCA" -}}
{{- printf "%s-ca" (include "mcphost.redisDevName" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The key of the CA in that Secret ("" for the system's roots). */}}
{{- define "mcphost.redisCAKey" -}}
{{- if .Values.redis.tls.caKey }}
{{- .Values.redis.tls.caKey }}
{{- else if .Values.redis.dev.enabled }}
{{- "ca.crt" }}
{{- end }}
{{- end }}

{{/* The state block, from the redis values. */}}
{{- define "mcphost.stateBlock" -}}
# What the replicas share, sealed with MCPHOST_SESSION_KEYS (added by the
# chart from its redis values).
state {
  backend    = "redis"
  url        = "{{ include "mcphost.redisURL" . }}"
  key_prefix = {{ .Values.redis.keyPrefix | quote }}
{{- with .Values.redis.tls }}
{{- if and .enabled (include "mcphost.redisCAKey" $) }}
  ca_file    = "{{ include "mcphost.redisTLSDir" $ }}/{{ include "mcphost.redisCAKey" $ }}"
{{- end }}
{{- if and .enabled .certKey }}
  cert_file  = "{{ include "mcphost.redisTLSDir" $ }}/{{ .certKey }}"
{{- end }}
{{- if and .enabled .keyKey }}
  key_file   = "{{ include "mcphost.redisTLSDir" $ }}/{{ .keyKey }}"
{{- end }}
{{- end }}
}
{{- end }}

{{/* config.hcl: the user's configuration, then the state block. */}}
{{- define "mcphost.configHCL" -}}
{{- if regexMatch "(?m)^\\s*state\\s*\\{" .Values.config }}
{{- fail "config: do not write a state block; the chart adds it from the redis values" }}
{{- end }}
{{- tpl .Values.config . | trim }}

{{ include "mcphost.stateBlock" . }}
{{- end }}

{{/* Checks of values the schema cannot express. */}}
{{- define "mcphost.validate" -}}
{{- $_ := include "mcphost.redisHost" . }}
{{- range .Values.sessionKeys }}
{{- if not (regexMatch "^[A-Za-z0-9+/]{43}=$" .) }}
{{- fail "sessionKeys: each key is 32 random bytes in standard base64 (openssl rand -base64 32)" }}
{{- end }}
{{- end }}
{{- if and .Values.serveToken (not (regexMatch "^[!-~]{16,}$" .Values.serveToken)) }}
{{- fail "serveToken: at least 16 printable ASCII characters without spaces, as mcphost serve requires (openssl rand -hex 32), or empty to generate one" }}
{{- end }}
{{- if and .Values.redis.auth (not .Values.existingSecret) (not .Values.redis.existingSecret) (not .Values.redis.password) (not .Values.redis.dev.enabled) }}
{{- fail "redis.password is required (or redis.existingSecret, existingSecret, or redis.auth=false)" }}
{{- end }}
{{- if and .Values.redis.tls.enabled (or .Values.redis.tls.caKey .Values.redis.tls.certKey .Values.redis.tls.keyKey) (not .Values.redis.tls.secretName) }}
{{- fail "redis.tls.secretName is required with caKey, certKey or keyKey" }}
{{- end }}
{{- if and .Values.redis.tls.enabled .Values.redis.dev.enabled (or .Values.redis.tls.secretName .Values.redis.tls.caKey .Values.redis.tls.certKey .Values.redis.tls.keyKey) }}
{{- fail "redis.dev (the single Redis for trying the chart) makes its own certificate: unset redis.tls.secretName, caKey, certKey and keyKey" }}
{{- end }}
{{- end }}
