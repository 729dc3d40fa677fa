{{/*
A hook Job running one `lethe` command before install and upgrade; the next run replaces it.
Call with (dict "root" $ "component" "migrate" "args" (list "migrate") "weight" "-5").
*/}}
{{- define "lethe.hookJob" -}}
{{- $root := .root -}}
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ include "lethe.fullname" $root }}-{{ .component }}
  labels:
    {{- include "lethe.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: {{ .weight | quote }}
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  backoffLimit: {{ $root.Values.jobs.backoffLimit }}
  activeDeadlineSeconds: {{ $root.Values.jobs.activeDeadlineSeconds }}
  template:
    metadata:
      labels:
        {{- include "lethe.selectorLabels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ .component }}
    spec:
      restartPolicy: Never
      {{- include "lethe.podCommon" $root | nindent 6 }}
      containers:
        - name: {{ .component }}
          image: {{ include "lethe.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: {{ toJson .args }}
          {{- include "lethe.env" $root | nindent 10 }}
          resources:
            {{- toYaml $root.Values.jobs.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          {{- include "lethe.volumeMounts" $root | nindent 10 }}
      {{- include "lethe.volumes" $root | nindent 6 }}
{{- end }}
