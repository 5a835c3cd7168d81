{{/*
ration.name is the chart name, or nameOverride.
*/}}
{{- define "ration.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
ration.fullname is "<release>-<name>" (just the release name when it already
contains the chart name), or fullnameOverride.
*/}}
{{- define "ration.fullname" -}}
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
ration.jobName is "<fullname>-<runId>". It stays within the 63 characters of
a label value (the Job controller labels pods with it): fullname is cut to 42,
runId is at most 20 by the schema.
*/}}
{{- define "ration.jobName" -}}
{{- printf "%s-%s" (include "ration.fullname" . | trunc 42 | trimSuffix "-") (include "ration.runId" .) }}
{{- end }}

{{/*
ration.runId is runId as text. A number read from a values file arrives as a
float64, which would print as 2.0261120e+07.
*/}}
{{- define "ration.runId" -}}
{{- include "ration.idText" .Values.runId }}
{{- end }}

{{/*
ration.idText is a runId value as text. A number read from a values file
arrives as a float64, which would print as 2.0261120e+07.
*/}}
{{- define "ration.idText" -}}
{{- if kindIs "float64" . }}
{{- . | int64 }}
{{- else }}
{{- . }}
{{- end }}
{{- end }}

{{/*
ration.joblogRunId is the runId in the joblogs' names: resumeFrom, or this
run's own runId. A new run must not resume from an earlier run's joblogs
unless told to: ration refuses the joblog of another command, and with the
same command would skip every input the old run recorded.
*/}}
{{- define "ration.joblogRunId" -}}
{{- if and (not (kindIs "invalid" .Values.resumeFrom)) (ne (toString .Values.resumeFrom) "") }}
{{- include "ration.idText" .Values.resumeFrom }}
{{- else }}
{{- include "ration.runId" . }}
{{- end }}
{{- end }}

{{/*
ration.chart is the helm.sh/chart label value.
*/}}
{{- define "ration.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
ration.selectorLabels identify this release's pods.
*/}}
{{- define "ration.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ration.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
ration.labels are the recommended labels for every object of the chart.
*/}}
{{- define "ration.labels" -}}
helm.sh/chart: {{ include "ration.chart" . }}
{{ include "ration.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/component: batch
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
ration.image is "<repository>:<tag>", the tag defaulting to appVersion.
*/}}
{{- define "ration.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
ration.containerSecurityContext is the restricted Pod Security profile for
one container: ration's image is distroless and needs no privilege at all.
*/}}
{{- define "ration.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
ration.args are the arguments after the image's ENTRYPOINT (/ration). Each is
emitted with quote (Go %q, whose escapes are all valid in YAML double-quoted
scalars) so that any pattern or command survives YAML intact.
*/}}
{{- define "ration.args" -}}
{{- $r := .Values.run -}}
- "run"
{{- with include "ration.manifestPath" . }}
- {{ printf "--manifest=%s" . | quote }}
{{- else }}
{{- range $r.files }}
- {{ printf "--files=%s" . | quote }}
{{- end }}
{{- range $r.exclude }}
- {{ printf "--exclude=%s" . | quote }}
{{- end }}
{{- end }}
{{- with $r.jobs }}
- "-j"
- {{ . | quote }}
{{- end }}
{{- with $r.memPerJob }}
- {{ printf "--mem-per-job=%s" . | quote }}
{{- end }}
{{- with $r.timeout }}
- {{ printf "--timeout=%s" . | quote }}
{{- end }}
{{- if $r.retries }}
- {{ printf "--retries=%d" (int $r.retries) | quote }}
{{- end }}
{{- with $r.halt }}
- {{ printf "--halt=%s" . | quote }}
{{- end }}
{{- /*
--exit-count: the exit status is the number of failed jobs (1..101) even
with --halt, whose GNU status would be the failing job's own (255 would
fail the Job by the podFailurePolicy, 137 or 200 retry the pod).
*/}}
- "--exit-count"
{{- with $r.stallTimeout }}
- {{ printf "--stall-timeout=%s" . | quote }}
{{- end }}
- {{ printf "--term-timeout=%ds" (int .Values.termTimeoutSeconds) | quote }}
- {{ printf "--joblog=%s/joblog-%s-$(JOB_COMPLETION_INDEX).tsv" (trimSuffix "/" .Values.output.mountPath) (include "ration.joblogRunId" .) | quote }}
{{- /*
--resume-failed, not --resume: a replaced pod (exit 137 or 143) runs again
the jobs its shard's joblog records as failed, so that it exits with the
number that still fail and FailIndex acts on it. With --resume it would skip
them, exit 0, and the index would count as complete with inputs failed.
*/}}
{{- if $r.resume }}
- "--resume-failed"
{{- end }}
{{- with $r.logFormat }}
- {{ printf "--log-format=%s" . | quote }}
{{- end }}
- "--no-bar"
{{- if .Values.metrics.enabled }}
- {{ printf "--metrics-addr=:%d" (int .Values.metrics.port) | quote }}
{{- end }}
{{- range $r.extraArgs }}
- {{ . | quote }}
{{- end }}
- "--"
{{- /* fail, not required: in helm lint's mode required returns "", which range cannot iterate over. */}}
{{- if not $r.command }}
{{- fail "set run.command, the program each job runs (e.g. --set-json 'run.command=[\"analyze\",\"{}\"]'), and image.repository to an image that holds it and /ration: ration's own image holds only /ration" }}
{{- end }}
{{- range $r.command }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{/*
ration.manifestPath is the manifest the pods read (--manifest): the one the
hook Job generates, or manifest.path; empty when the pods walk run.files.
*/}}
{{- define "ration.manifestPath" -}}
{{- if .Values.manifest.generate }}
{{- printf "%s/manifest-%s.txt" (trimSuffix "/" .Values.output.mountPath) (include "ration.joblogRunId" .) }}
{{- else if .Values.manifest.path }}
{{- .Values.manifest.path }}
{{- end }}
{{- end }}

{{/*
ration.manifestArgs are the arguments of the hook Job's ration manifest.
*/}}
{{- define "ration.manifestArgs" -}}
- "manifest"
{{- range .Values.run.files }}
- {{ printf "--files=%s" . | quote }}
{{- end }}
{{- range .Values.run.exclude }}
- {{ printf "--exclude=%s" . | quote }}
{{- end }}
- "--keep-existing"
- {{ printf "--output=%s" (include "ration.manifestPath" .) | quote }}
{{- end }}
