{{/*
Names. The chart's objects are named "<fullname>-controller", "<fullname>-webhook", ...; with the
release name "restarter" (docs/install.md) fullname is "restarter", so the names are those of
manifests/.
*/}}
{{- define "restarter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every object name; at most 40 characters, so that the longest suffix
("-webhook-configuration", and the Service names' 63) always fits. */}}
{{- define "restarter.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "restarter.controller.name" -}}{{ include "restarter.fullname" . }}-controller{{- end -}}
{{- define "restarter.webhook.name" -}}{{ include "restarter.fullname" . }}-webhook{{- end -}}
{{/* The names the roles are bound to (resourceNames) and the flags that use them. */}}
{{- define "restarter.digestKeyName" -}}{{ include "restarter.fullname" . }}-digest-key{{- end -}}
{{- define "restarter.leaseName" -}}{{ include "restarter.controller.name" . }}{{- end -}}
{{- define "restarter.webhook.configurationName" -}}{{ include "restarter.webhook.name" . }}.stackable.tech{{- end -}}
{{- define "restarter.webhook.secretName" -}}{{ include "restarter.webhook.name" . }}-certs{{- end -}}

{{/*
Labels of every object: Helm's own (helm.sh/chart, managed-by, version and, in the selector
labels, instance; stripped by tests/check-helm.sh when it compares with
manifests/), the two of manifests/, then .Values.labels. Call with (dict "root" $ "component" C).
*/}}
{{- define "restarter.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
{{ include "restarter.selectorLabels" . }}
{{- with .root.Values.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* What selects a component's pods; the instance label keeps two releases in one namespace apart. */}}
{{- define "restarter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "restarter.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end -}}

{{/* metadata.annotations from .Values.annotations, when there are any. */}}
{{- define "restarter.annotations" -}}
{{- with .Values.annotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "restarter.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}
{{- end -}}

{{/* Combinations serve-webhook would refuse at start, refused before anything is installed. */}}
{{- define "restarter.validate" -}}
{{- if and .Values.watchNamespaces .Values.webhook.enabled .Values.webhook.excludeNamespaces -}}
{{- fail "webhook.excludeNamespaces cannot be combined with watchNamespaces (the webhook is then called only for watchNamespaces)" -}}
{{- end -}}
{{- end -}}
