{{/*
common.labels.standard: the app.kubernetes.io labels and helm.sh/chart of a
component. Takes (dict "context" $ "component" "name"); component may be empty.
*/}}
{{- define "common.labels.standard" -}}
{{ include "common.labels.selector" . }}
app.kubernetes.io/version: {{ .context.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .context.Release.Service }}
app.kubernetes.io/part-of: {{ include "common.names.name" .context }}
helm.sh/chart: {{ printf "%s-%s" .context.Chart.Name .context.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/*
common.labels.selector: the labels that select a component's pods; they
never change during an upgrade. Takes (dict "context" $ "component" "name").
*/}}
{{- define "common.labels.selector" -}}
app.kubernetes.io/name: {{ include "common.names.name" .context }}
app.kubernetes.io/instance: {{ .context.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end -}}
