{{/*
webapp.name is the name of every object in a release, and of the WebApp custom
resource the release belongs to. rudder names a WebApp's release
"webapp-<cr-name>" (prefixed with the kind, so that two kinds with same-named
custom resources never share a release); the prefix is removed again here, so
the WebApp "my-webapp" (release "webapp-my-webapp") owns the Deployment,
Service, Ingress and PersistentVolumeClaim "my-webapp". A release installed by
hand under a name without the prefix keeps that name. At most 63 characters,
the limit for a label value and a Service name.
*/}}
{{- define "webapp.name" -}}
{{- .Release.Name | trimPrefix "webapp-" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/*
webapp.chart is the helm.sh/chart label: chart name and version.
*/}}
{{- define "webapp.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/*
webapp.version is the app.kubernetes.io/version label: the tag of .Values.image
when it has one ("nginx:1.25" gives "1.25"; a digest after "@" is ignored),
otherwise the chart's appVersion. Cut down to a valid label value.
*/}}
{{- define "webapp.version" -}}
{{- $ref := .Values.image | splitList "@" | first -}}
{{- $last := $ref | splitList "/" | last -}}
{{- $version := "" -}}
{{- if contains ":" $last -}}
{{- $version = $last | splitList ":" | last -}}
{{- end -}}
{{- $version = regexReplaceAll "[^A-Za-z0-9_.-]" $version "-" | trunc 63 -}}
{{- $version = regexReplaceAll "^[^A-Za-z0-9]+|[^A-Za-z0-9]+$" $version "" -}}
{{- $version | default .Chart.AppVersion -}}
{{- end }}

{{/*
webapp.selectorLabels select the pods of a WebApp. They are immutable in a
Deployment's selector, so they hold only the name and never change.
*/}}
{{- define "webapp.selectorLabels" -}}
app: {{ include "webapp.name" . }}
app.kubernetes.io/instance: {{ include "webapp.name" . }}
{{- end }}

{{/*
webapp.labels go on every object and on the pod template.
*/}}
{{- define "webapp.labels" -}}
{{ include "webapp.selectorLabels" . }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/version: {{ include "webapp.version" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ include "webapp.chart" . }}
{{- end }}

{{/*
webapp.resourceList renders the cpu and memory entries of a resource list
(resources.requests or resources.limits) that are set, and nothing else.
*/}}
{{- define "webapp.resourceList" -}}
{{- with get . "cpu" }}
cpu: {{ . | quote }}
{{- end }}
{{- with get . "memory" }}
memory: {{ . | quote }}
{{- end }}
{{- end }}

{{/*
webapp.validate fails the render, with a message naming the value to fix, for
combinations values.schema.json cannot express. It renders nothing.
*/}}
{{- define "webapp.validate" -}}
{{- $name := include "webapp.name" . -}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $name) -}}
{{- fail (printf "webapp: name %q (from release %q) is not a valid Service name: use lowercase letters, digits and '-', starting with a letter and ending with a letter or digit" $name .Release.Name) -}}
{{- end -}}
{{- if .Values.ingress.enabled -}}
{{- if not .Values.ingress.host -}}
{{- fail "webapp: ingress.host is required when ingress.enabled is true" -}}
{{- end -}}
{{- $class := get .Values.ingress.annotations "kubernetes.io/ingress.class" -}}
{{- if and .Values.ingress.className $class (ne $class .Values.ingress.className) -}}
{{- fail (printf "webapp: ingress.className %q and the annotation kubernetes.io/ingress.class %q must match when both are set" .Values.ingress.className $class) -}}
{{- end -}}
{{- end -}}
{{- with .Values.autoscaling -}}
{{- if .enabled -}}
{{- if gt (int .minReplicas) (int .maxReplicas) -}}
{{- fail (printf "webapp: autoscaling.minReplicas (%d) must not exceed autoscaling.maxReplicas (%d)" (int .minReplicas) (int .maxReplicas)) -}}
{{- end -}}
{{- if not (dig "requests" "cpu" "" ($.Values.resources | default dict)) -}}
{{- fail "webapp: autoscaling.enabled needs resources.requests.cpu: the autoscaler measures CPU use against it; set it, e.g. resources: {requests: {cpu: \"100m\"}}" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and .Values.storage.enabled (eq (clean .Values.storage.mountPath) "/tmp") -}}
{{- fail "webapp: storage.mountPath must not be /tmp: an emptyDir is mounted there" -}}
{{- end -}}
{{- end }}
