{{- define "nginx.fullname" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end -}}
