{{/*
database.name is the name of every object in a release, and of the Database
custom resource the release belongs to. rudder names a Database's release
"database-<cr-name>" (prefixed with the kind, so that two kinds with
same-named custom resources never share a release); the prefix is removed
again here, so the Database "my-database" (release "database-my-database")
owns the StatefulSet and Service "my-database", the headless Service
"my-database-headless", the pod "my-database-0" and the claim
"data-my-database-0". A release installed by hand under a name without the
prefix keeps that name.
*/}}
{{- define "database.name" -}}
{{- .Release.Name | trimPrefix "database-" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/*
database.chart is the helm.sh/chart label: chart name and version.
*/}}
{{- define "database.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/*
database.image is the PostgreSQL image: image.repository tagged with version.
*/}}
{{- define "database.image" -}}
{{- printf "%s:%s" .Values.image.repository .Values.version -}}
{{- end }}

{{/*
database.secretName is the credentials Secret: credentials.secretName, or
"<name>-credentials" when that is empty (the name rudder's password hook gives
a Secret it generates).
*/}}
{{- define "database.secretName" -}}
{{- .Values.credentials.secretName | default (printf "%s-credentials" (include "database.name" .)) -}}
{{- end }}

{{/*
database.selectorLabels select the pods of a Database. They are immutable in a
StatefulSet's selector, so they hold only the name and never change.
*/}}
{{- define "database.selectorLabels" -}}
app: {{ include "database.name" . }}
app.kubernetes.io/instance: {{ include "database.name" . }}
{{- end }}

{{/*
database.labels go on every object the chart renders and on the pod template.
*/}}
{{- define "database.labels" -}}
{{ include "database.selectorLabels" . }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/version: {{ .Values.version | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ include "database.chart" . }}
{{- end }}

{{/*
database.claimLabels go on the claim template, and so on the claim
data-<name>-0 the StatefulSet controller makes from it. A claim template can
never change, so these hold nothing that does (no version, no chart version),
and no managed-by: Helm does not manage the claim, which outlives the release.
*/}}
{{- define "database.claimLabels" -}}
{{ include "database.selectorLabels" . }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/component: data
{{- end }}

{{/*
database.secretEnv renders an environment variable read from the credentials
Secret. Takes a list: the root context, the variable's name and the values key
under credentials that names the Secret's key ("usernameKey" or "passwordKey").
*/}}
{{- define "database.secretEnv" -}}
{{- $root := index . 0 -}}
- name: {{ index . 1 }}
  valueFrom:
    secretKeyRef:
      name: {{ include "database.secretName" $root | quote }}
      key: {{ get $root.Values.credentials (index . 2) | quote }}
{{- end }}

{{/*
database.resourceList renders the cpu and memory entries of a resource list
(resources.requests or resources.limits) that are set, and nothing else.
*/}}
{{- define "database.resourceList" -}}
{{- with get . "cpu" }}
cpu: {{ . | quote }}
{{- end }}
{{- with get . "memory" }}
memory: {{ . | quote }}
{{- end }}
{{- end }}

{{/*
database.validate fails the render, with a message naming what to fix, for
what values.schema.json cannot express. It renders nothing.
*/}}
{{- define "database.validate" -}}
{{- $name := include "database.name" . -}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $name) -}}
{{- fail (printf "database: name %q (from release %q) is not a valid Service name: use lowercase letters, digits and '-', starting with a letter and ending with a letter or digit" $name .Release.Name) -}}
{{- end -}}
{{- if gt (len $name) 44 -}}
{{- fail (printf "database: name %q (from release %q) is longer than 44 characters: rudder's release name \"database-<name>\" must fit Helm's 53" $name .Release.Name) -}}
{{- end -}}
{{- end }}
