{{/*
leaderelection.name is the name of the Service: the LeaderElection's, the
release name ("leaderelection-<name>") without its prefix.
*/}}
{{- define "leaderelection.name" -}}
{{- .Release.Name | trimPrefix "leaderelection-" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{- define "leaderelection.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ include "leaderelection.name" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}
