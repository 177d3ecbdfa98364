{{- define "redis.fullname" -}}
{{ .Release.Name }}-redis
{{- end -}}
