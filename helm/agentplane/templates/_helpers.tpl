{{/*
Names. The fullname is cut to 50 characters so that "<fullname>-webhooks" and the other
component suffixes stay within the 63 characters of a DNS label.
*/}}
{{- define "agentplane.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "agentplane.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "agentplane.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "agentplane.labels" -}}
helm.sh/chart: {{ include "agentplane.chart" . }}
{{ include "agentplane.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "agentplane.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agentplane.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "agentplane.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "agentplane.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "agentplane.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* The Secret holding SERVICE_JWT_SECRET, SERVICE_API_KEYS and REDIS_URL. */}}
{{- define "agentplane.secretName" -}}
{{- .Values.existingSecret | default (include "agentplane.fullname" .) }}
{{- end }}

{{- define "agentplane.webhooksSecretName" -}}
{{- .Values.webhooks.existingSecret | default (printf "%s-webhooks" (include "agentplane.fullname" .)) }}
{{- end }}

{{/*
A value of `config` as an environment variable: YAML numbers arrive as float64 and would
print as 1.048576e+06, so whole numbers are printed as integers; a fraction (a sampler's
ratio, 0.25) as it is, not cut to 0.
*/}}
{{- define "agentplane.envValue" -}}
{{- if and (kindIs "float64" .) (eq (toString (float64 (int64 .))) (toString .)) }}
{{- int64 . | quote }}
{{- else }}
{{- toString . | quote }}
{{- end }}
{{- end }}

{{/* Settings every agentplane container reads: the ConfigMap, then the Secret. */}}
{{- define "agentplane.envFrom" -}}
- configMapRef:
    name: {{ include "agentplane.fullname" . }}-config
- secretRef:
    name: {{ include "agentplane.secretName" . }}
{{- end }}

{{/* Pod-level settings shared by the api, worker and webhooks pods. */}}
{{- define "agentplane.podCommon" -}}
serviceAccountName: {{ include "agentplane.serviceAccountName" . }}
automountServiceAccountToken: false
terminationGracePeriodSeconds: {{ .Values.shutdown.terminationGracePeriodSeconds }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{/* Scheduling of one component; the argument is that component's values (.Values.api, …). */}}
{{- define "agentplane.placement" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
Checks the schema cannot express. The pod must outlive its preStop sleep plus the process's
own drain, or the kubelet kills it mid-drain.
*/}}
{{- define "agentplane.validate" -}}
{{- $drainSeconds := div (add (int64 .Values.shutdown.drainTimeoutMs) 999) 1000 }}
{{- $needed := add (int64 .Values.shutdown.preStopSleepSeconds) $drainSeconds }}
{{- if le (int64 .Values.shutdown.terminationGracePeriodSeconds) $needed }}
{{- fail (printf "shutdown.terminationGracePeriodSeconds (%d) must exceed shutdown.preStopSleepSeconds + shutdown.drainTimeoutMs/1000 (%d)" (int64 .Values.shutdown.terminationGracePeriodSeconds) $needed) }}
{{- end }}
{{- if and .Values.api.autoscaling.enabled (gt (int64 .Values.api.autoscaling.minReplicas) (int64 .Values.api.autoscaling.maxReplicas)) }}
{{- fail "api.autoscaling.minReplicas must not exceed api.autoscaling.maxReplicas" }}
{{- end }}
{{- include "agentplane.validateRedis" . }}
{{- include "agentplane.validateAuth" . }}
{{- include "agentplane.validateWebhooks" . }}
{{- end }}

{{/*
Redis and auth settings that only make sense together. Checked here rather than in
values.schema.json so that the message names the values to set.
*/}}
{{- define "agentplane.validateRedis" -}}
{{- $r := .Values.redis }}
{{- if and $r.url .Values.existingSecret }}
{{- fail (printf "redis.url is not used with existingSecret: put REDIS_URL in the Secret %q and leave redis.url empty" .Values.existingSecret) }}
{{- end }}
{{- if and (or $r.password $r.sentinelPassword) .Values.existingSecret }}
{{- fail (printf "redis.password and redis.sentinelPassword are not used with existingSecret: put REDIS_PASSWORD / REDIS_SENTINEL_PASSWORD in the Secret %q" .Values.existingSecret) }}
{{- end }}
{{- if gt (len (compact (list $r.url $r.clusterNodes $r.sentinels))) 1 }}
{{- fail "set only one of redis.url, redis.clusterNodes and redis.sentinels" }}
{{- end }}
{{- if and $r.url (or $r.username $r.password $r.tls.enabled) }}
{{- fail "redis.url carries its own credentials and TLS (rediss://user:password@host:6379): leave redis.username, redis.password and redis.tls.enabled unset with it" }}
{{- end }}
{{- if not (or $r.url $r.clusterNodes $r.sentinels .Values.existingSecret $r.bundled.enabled) }}
{{- fail "agentplane needs a Redis: set redis.url=redis://host:6379 (rediss:// for TLS), redis.clusterNodes (a Redis Cluster) or redis.sentinels (Sentinel), or existingSecret naming a Secret with REDIS_URL, or redis.bundled.enabled=true (a single node, for trying out)" }}
{{- end }}
{{- end }}

{{- define "agentplane.validateAuth" -}}
{{- $auth := .Values.config.SERVICE_AUTH | default "none" }}
{{- if and (eq $auth "jwt") (not (or .Values.secrets.SERVICE_JWT_SECRET .Values.config.SERVICE_JWT_JWKS_URL .Values.config.SERVICE_JWT_PUBLIC_KEY .Values.existingSecret)) }}
{{- fail "config.SERVICE_AUTH=jwt needs a key: secrets.SERVICE_JWT_SECRET (HS256, at least 32 bytes), config.SERVICE_JWT_JWKS_URL or config.SERVICE_JWT_PUBLIC_KEY (RS256), or existingSecret naming a Secret with SERVICE_JWT_SECRET" }}
{{- end }}
{{- if and (eq $auth "apikey") (not (or .Values.secrets.SERVICE_API_KEYS .Values.existingSecret)) }}
{{- fail "config.SERVICE_AUTH=apikey needs keys: secrets.SERVICE_API_KEYS=\"key:role:tenant,...\", or existingSecret naming a Secret with SERVICE_API_KEYS" }}
{{- end }}
{{- end }}

{{/*
An enabled receiver checks a shared secret or a signature (WEBHOOK_INSECURE="true" opts out),
and a signature scheme has its key: the process refuses to start otherwise.
*/}}
{{- define "agentplane.validateWebhooks" -}}
{{- if .Values.webhooks.enabled }}
{{- $scheme := .Values.webhooks.config.WEBHOOK_SIGNATURE | default "none" }}
{{- $existing := .Values.webhooks.existingSecret }}
{{- if and (ne $scheme "none") (not (or .Values.webhooks.secrets.WEBHOOK_SIGNING_SECRET $existing)) }}
{{- fail (printf "webhooks.config.WEBHOOK_SIGNATURE=%s needs its key: webhooks.secrets.WEBHOOK_SIGNING_SECRET, or webhooks.existingSecret naming a Secret with WEBHOOK_SIGNING_SECRET" $scheme) }}
{{- end }}
{{- if and (eq $scheme "none") (ne (toString (.Values.webhooks.config.WEBHOOK_INSECURE | default "false")) "true") (not (or .Values.webhooks.secrets.WEBHOOK_SECRET $existing)) }}
{{- fail "webhooks.enabled=true would accept deliveries from anyone: set webhooks.secrets.WEBHOOK_SECRET, or webhooks.config.WEBHOOK_SIGNATURE with webhooks.secrets.WEBHOOK_SIGNING_SECRET, or webhooks.existingSecret (webhooks.config.WEBHOOK_INSECURE=\"true\" accepts an open receiver)" }}
{{- end }}
{{- end }}
{{- end }}

{{/* "true" when the release runs its own Redis: enabled, and no url, cluster or Sentinels name another one. */}}
{{- define "agentplane.bundledRedis" -}}
{{- if and .Values.redis.bundled.enabled (not (or .Values.redis.url .Values.redis.clusterNodes .Values.redis.sentinels)) }}true{{ end }}
{{- end }}

{{/*
What operators add to a container: the shared extraEnv / extraVolumeMounts / extraVolumes,
then the component's own. The argument is (list $ .Values.<component> "<key>").
*/}}
{{- define "agentplane.extra" -}}
{{- $root := index . 0 }}
{{- $key := index . 2 }}
{{- with concat (get $root.Values $key | default list) (get (index . 1) $key | default list) }}
{{- toYaml . }}
{{- end }}
{{- end }}
