{{/*
network.name is the name of the ConfigMap of a release, and of the Network
custom resource the release belongs to. rudder names a Network's release
"network-<cr-name>" (prefixed with the kind, so that two kinds with same-named
custom resources never share a release); the prefix is removed again here, so
the Network "example-network" (release "network-example-network") owns the
ConfigMap "example-network". A release installed by hand under a name without
the prefix keeps that name. At most 63 characters, the limit for a label value.
*/}}
{{- define "network.name" -}}
{{- .Release.Name | trimPrefix "network-" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/*
network.chart is the helm.sh/chart label: chart name and version.
*/}}
{{- define "network.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/*
network.labels go on every object.
*/}}
{{- define "network.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ include "network.name" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ include "network.chart" . }}
{{- end }}

{{/*
network.family is the IP family of an address or CIDR: "IPv6" when it
contains a colon, "IPv4" otherwise. values.schema.json has already checked the
shape of both values, so this is all it takes.
*/}}
{{- define "network.family" -}}
{{- if contains ":" . }}IPv6{{ else }}IPv4{{ end -}}
{{- end }}

{{/*
network.prefixLength is the prefix length of .Values.cidr: the number after "/".
*/}}
{{- define "network.prefixLength" -}}
{{- .Values.cidr | splitList "/" | last -}}
{{- end }}

{{/*
network.netmask is the dotted netmask of an IPv4 .Values.cidr, e.g.
"255.255.0.0" for a /16: octet i keeps min(8, max(0, prefix - 8i)) leading
one bits. Renders nothing for IPv6, which has no netmask notation.
*/}}
{{- define "network.netmask" -}}
{{- if eq (include "network.family" .Values.cidr) "IPv4" -}}
{{- $prefix := include "network.prefixLength" . | atoi -}}
{{- $octetOfBits := list 0 128 192 224 240 248 252 254 255 -}}
{{- $octets := list -}}
{{- range $i := until 4 -}}
{{- $bits := sub $prefix (mul 8 $i) | max 0 | min 8 -}}
{{- $octets = append $octets (index $octetOfBits (int $bits)) -}}
{{- end -}}
{{- join "." $octets -}}
{{- end -}}
{{- end }}

{{/*
network.validate fails the render, with a message naming the value to fix, for
what values.schema.json cannot express. It renders nothing. Whether the gateway
lies inside the CIDR is left to the Network CRD's CEL rules.
*/}}
{{- define "network.validate" -}}
{{- $cidrFamily := include "network.family" .Values.cidr -}}
{{- $gatewayFamily := include "network.family" .Values.gateway -}}
{{- if ne $cidrFamily $gatewayFamily -}}
{{- fail (printf "network: gateway %q is an %s address but cidr %q is an %s range; use a gateway inside cidr" .Values.gateway $gatewayFamily .Values.cidr $cidrFamily) -}}
{{- end -}}
{{- end }}
