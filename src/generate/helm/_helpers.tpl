{{/*
The chart's name, which also names the app in labels.
*/}}
{{- define "%CHART%.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
What every object's name starts with. A release named after the chart (or
containing its name) uses the release name alone, so `helm install
%CHART%` gives the objects the names `make deploy` gives them.
*/}}
{{- define "%CHART%.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The chart's name and version, as the helm.sh/chart label wants them.
*/}}
{{- define "%CHART%.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The labels that select the manager's Pods. Keep them, and so the release name
and nameOverride, unchanged across upgrades: a Deployment's selector cannot
change.
*/}}
{{- define "%CHART%.selectorLabels" -}}
app.kubernetes.io/name: {{ include "%CHART%.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The labels of every object: the selector labels, plus the chart and version
that made it.
*/}}
{{- define "%CHART%.labels" -}}
helm.sh/chart: {{ include "%CHART%.chart" . }}
{{ include "%CHART%.selectorLabels" . }}
{{- with .Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
The service account the manager runs as, which the role bindings name. An
account the chart does not create must be named: binding the manager's roles
to the namespace's "default" account would hand them to every Pod using it.
*/}}
{{- define "%CHART%.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (printf "%s-%SERVICE_ACCOUNT%" (include "%CHART%.fullname" .)) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name must name an existing service account when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}
