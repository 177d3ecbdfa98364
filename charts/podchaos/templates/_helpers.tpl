{{/*
podchaos.name is the name of the plan's ConfigMap: the PodChaos's own name
(rudder names its release "podchaos-<name>"; the prefix is removed again).
*/}}
{{- define "podchaos.name" -}}
{{- .Release.Name | trimPrefix "podchaos-" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{- define "podchaos.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ include "podchaos.name" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
podchaos.perRound says how many pods a round acts on at most.
*/}}
{{- define "podchaos.perRound" -}}
{{- if .Values.percent }}{{ .Values.percent }} of the selected pods (at least one){{ else }}{{ .Values.count }}{{ end -}}
{{- end }}
