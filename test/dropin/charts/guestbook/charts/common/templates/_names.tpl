{{/*
common.names.name: the chart name, or .Values.nameOverride, shortened to fit a
label value. Takes the chart's top-level context.
*/}}
{{- define "common.names.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
common.names.fullname: the release name, with the chart name appended unless
the release name already holds it; .Values.fullnameOverride wins. Takes the
chart's top-level context.
*/}}
{{- define "common.names.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "common.names.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
common.names.component: the full name of one component of an application,
"<fullname>-<component>". Takes (dict "context" $ "component" "name").
*/}}
{{- define "common.names.component" -}}
{{- printf "%s-%s" (include "common.names.fullname" .context) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}
