{{/* Names and labels. */}}
{{- define "lethe.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "lethe.fullname" -}}
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

{{- define "lethe.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "lethe.labels" -}}
helm.sh/chart: {{ include "lethe.chart" . }}
{{ include "lethe.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "lethe.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lethe.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "lethe.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "lethe.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "lethe.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Temporal speaks TLS with an API key, with mTLS, or when asked. */}}
{{- define "lethe.temporalTLS" -}}
{{- if or .Values.temporal.tls .Values.temporal.mtls.enabled .Values.temporal.apiKey.value .Values.temporal.apiKey.existingSecret -}}
true
{{- else -}}
false
{{- end }}
{{- end }}

{{- define "lethe.hasTemporalApiKey" -}}
{{- if or .Values.temporal.apiKey.value .Values.temporal.apiKey.existingSecret }}true{{ end }}
{{- end }}

{{- define "lethe.hasAdminToken" -}}
{{- if or .Values.adminToken.value .Values.adminToken.existingSecret }}true{{ end }}
{{- end }}

{{- define "lethe.hasSecretKey" -}}
{{- if or .Values.secretKey.value .Values.secretKey.existingSecret }}true{{ end }}
{{- end }}

{{- define "lethe.hasMetricsToken" -}}
{{- if or .Values.metricsToken.value .Values.metricsToken.existingSecret }}true{{ end }}
{{- end }}

{{/* Where the metrics token is: the user's Secret, else the chart's (for the scrapers' authorization). */}}
{{- define "lethe.metricsTokenSecret" -}}
name: {{ default (include "lethe.fullname" .) .Values.metricsToken.existingSecret }}
key: {{ ternary .Values.metricsToken.existingSecretKey "metrics-token" (not (empty .Values.metricsToken.existingSecret)) }}
{{- end }}

{{- define "lethe.hasOpenAIKey" -}}
{{- if or .Values.openai.apiKey .Values.openai.existingSecret }}true{{ end }}
{{- end }}

{{- define "lethe.databaseConfigured" -}}
{{- if or .Values.database.url .Values.database.existingSecret }}true{{ end }}
{{- end }}

{{- define "lethe.tlsMountPath" -}}/etc/lethe/temporal-tls{{- end }}

{{/*
The ConfigMap and the chart's own Secret are pre-install/pre-upgrade hooks, so the migration and
search-attribute Jobs (also hooks, which run before ordinary resources exist) can read them.
*/}}
{{- define "lethe.configHookAnnotations" -}}
helm.sh/hook: pre-install,pre-upgrade
helm.sh/hook-weight: "-10"
helm.sh/hook-delete-policy: before-hook-creation
{{- end }}

{{/* A secretKeyRef env entry: chart Secret when a value is given, else the user's Secret. */}}
{{- define "lethe.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ default .chartSecret .existingSecret }}
      key: {{ ternary .existingSecretKey .chartKey (not (empty .existingSecret)) }}
{{- end }}

{{/* Environment shared by every Lethe container: settings from the ConfigMap, secrets by reference. */}}
{{- define "lethe.env" -}}
{{- $secret := include "lethe.fullname" . -}}
envFrom:
  - configMapRef:
      name: {{ include "lethe.fullname" . }}
env:
{{ include "lethe.secretEnv" (dict "name" "LETHE_DATABASE_URL" "chartSecret" $secret "chartKey" "database-url" "existingSecret" .Values.database.existingSecret "existingSecretKey" .Values.database.existingSecretKey) | indent 2 }}
{{- if include "lethe.hasTemporalApiKey" . }}
{{ include "lethe.secretEnv" (dict "name" "LETHE_TEMPORAL_API_KEY" "chartSecret" $secret "chartKey" "temporal-api-key" "existingSecret" .Values.temporal.apiKey.existingSecret "existingSecretKey" .Values.temporal.apiKey.existingSecretKey) | indent 2 }}
{{- end }}
{{- if include "lethe.hasAdminToken" . }}
{{ include "lethe.secretEnv" (dict "name" "LETHE_ADMIN_TOKEN" "chartSecret" $secret "chartKey" "admin-token" "existingSecret" .Values.adminToken.existingSecret "existingSecretKey" .Values.adminToken.existingSecretKey) | indent 2 }}
{{- end }}
{{- if include "lethe.hasSecretKey" . }}
{{ include "lethe.secretEnv" (dict "name" "LETHE_SECRET_KEY" "chartSecret" $secret "chartKey" "secret-key" "existingSecret" .Values.secretKey.existingSecret "existingSecretKey" .Values.secretKey.existingSecretKey) | indent 2 }}
{{- end }}
{{- if include "lethe.hasMetricsToken" . }}
{{ include "lethe.secretEnv" (dict "name" "LETHE_METRICS_TOKEN" "chartSecret" $secret "chartKey" "metrics-token" "existingSecret" .Values.metricsToken.existingSecret "existingSecretKey" .Values.metricsToken.existingSecretKey) | indent 2 }}
{{- end }}
{{- if include "lethe.hasOpenAIKey" . }}
{{ include "lethe.secretEnv" (dict "name" "LETHE_OPENAI_API_KEY" "chartSecret" $secret "chartKey" "openai-api-key" "existingSecret" .Values.openai.existingSecret "existingSecretKey" .Values.openai.existingSecretKey) | indent 2 }}
{{- end }}
{{- end }}

{{/* Writable paths on a read-only root filesystem, plus the Temporal client certificate. */}}
{{- define "lethe.volumeMounts" -}}
volumeMounts:
  - name: tmp
    mountPath: /tmp
  - name: data
    mountPath: /var/lib/lethe
{{- if .Values.temporal.mtls.enabled }}
  - name: temporal-tls
    mountPath: {{ include "lethe.tlsMountPath" . }}
    readOnly: true
{{- end }}
{{- end }}

{{- define "lethe.volumes" -}}
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: {{ .Values.tmpSizeLimit }}
  - name: data
    emptyDir:
      sizeLimit: {{ .Values.tmpSizeLimit }}
{{- if .Values.temporal.mtls.enabled }}
  - name: temporal-tls
    secret:
      secretName: {{ required "temporal.mtls.existingSecret is required when temporal.mtls.enabled" .Values.temporal.mtls.existingSecret }}
      defaultMode: 0440
{{- end }}
{{- end }}

{{/* Pod-level fields shared by Deployments and Jobs. */}}
{{- define "lethe.podCommon" -}}
serviceAccountName: {{ include "lethe.serviceAccountName" . }}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{/* Restarts pods when settings or chart-held secrets change. */}}
{{- define "lethe.checksums" -}}
checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
