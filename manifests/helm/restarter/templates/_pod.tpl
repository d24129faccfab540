{{/*
The parts both Deployments share. Call with (dict "root" $ "component" C "values" V), V being
.Values.controller or .Values.webhook.
*/}}

{{/* The pod template's metadata. */}}
{{- define "restarter.podMetadata" -}}
labels:
  {{- include "restarter.labels" . | nindent 2 }}
  {{- with .root.Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .root.Values.podAnnotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Scheduling, pod security context and image pull secrets: the pod spec's fields other than
the containers. */}}
{{- define "restarter.podScheduling" -}}
securityContext:
  runAsNonRoot: true
  # The image's user (Dockerfile); numeric so runAsNonRoot can be checked.
  runAsUser: 65532
  runAsGroup: 65532
  seccompProfile:
    type: RuntimeDefault
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
affinity:
{{- if .values.affinity }}
  {{- toYaml .values.affinity | nindent 2 }}
{{- else }}
  podAntiAffinity:
    # Replicas on different nodes when there are any: a node failure must not take both.
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "restarter.selectorLabels" . | nindent 14 }}
{{- end }}
{{- end -}}

{{/* The container's image and hardening. */}}
{{- define "restarter.containerBase" -}}
image: {{ include "restarter.image" .root }}
{{- with .root.Values.image.pullPolicy }}
imagePullPolicy: {{ . }}
{{- end }}
resources:
  {{- toYaml .values.resources | nindent 2 }}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: ["ALL"]
{{- end -}}

{{/* Flags both servers take from the values: --content-aware, --log-level, extraArgs. */}}
{{- define "restarter.commonArgs" -}}
{{- with .root.Values.contentAware }}
- --content-aware={{ . }}
{{- end }}
{{- if .root.Values.argoRollouts.enabled }}
- --argo-rollouts
{{- end }}
{{- with .values.logLevel }}
- --log-level={{ . }}
{{- end }}
{{- range .values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}
