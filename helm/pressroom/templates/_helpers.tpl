{{/* Names ------------------------------------------------------------------------------ */}}

{{- define "pressroom.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "pressroom.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "pressroom.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "pressroom.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Labels: call with (dict "ctx" $ "component" "site") ----------------------------------- */}}

{{- define "pressroom.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pressroom.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "pressroom.labels" -}}
{{ include "pressroom.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: pressroom
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" }}
{{- end }}

{{/* Addresses ------------------------------------------------------------------------ */}}

{{- define "pressroom.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "pressroom.prefectApiUrl" -}}
{{- printf "http://%s-prefect:%v/api" (include "pressroom.fullname" .) .Values.prefect.port }}
{{- end }}

{{- define "pressroom.siteService" -}}
{{- printf "%s-site" (include "pressroom.fullname" .) }}
{{- end }}

{{/* Where purges go: Varnish when it fronts the site, else the site server's own endpoint. */}}
{{- define "pressroom.purgeUrl" -}}
{{- if .Values.varnish.enabled }}
{{- printf "http://%s-varnish/" (include "pressroom.fullname" .) }}
{{- else }}
{{- printf "http://%s:%v/" (include "pressroom.siteService" .) .Values.site.port }}
{{- end }}
{{- end }}

{{- define "pressroom.authSecret" -}}
{{- default (printf "%s-auth" (include "pressroom.fullname" .)) .Values.auth.existingSecret }}
{{- end }}

{{- define "pressroom.metricsSecret" -}}
{{- default (printf "%s-metrics" (include "pressroom.fullname" .)) .Values.metrics.existingSecret }}
{{- end }}

{{- define "pressroom.postgresqlHost" -}}
{{- printf "%s-postgresql" (include "pressroom.fullname" .) }}
{{- end }}

{{/* Secret environment ----------------------------------------------------------------- */}}

{{/* PRESSROOM_DATABASE_URL: built from the bundled PostgreSQL's password (Kubernetes expands
     $(VAR) from an earlier entry), or read whole from the operator's Secret. */}}
{{- define "pressroom.databaseEnv" -}}
{{- if .Values.postgresql.enabled }}
- name: PRESSROOM_DB_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "pressroom.postgresqlHost" . }}
      key: password
- name: PRESSROOM_DATABASE_URL
  value: {{ printf "postgresql+psycopg://%s:$(PRESSROOM_DB_PASSWORD)@%s:5432/%s" .Values.postgresql.username (include "pressroom.postgresqlHost" .) .Values.postgresql.database | quote }}
{{- else }}
- name: PRESSROOM_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ required "database.existingSecret (or postgresql.enabled) is required" .Values.database.existingSecret }}
      key: {{ .Values.database.existingSecretKey }}
{{- end }}
{{- end }}

{{- define "pressroom.prefectDatabaseEnv" -}}
{{- if .Values.postgresql.enabled }}
- name: PREFECT_DB_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "pressroom.postgresqlHost" . }}
      key: password
- name: PREFECT_API_DATABASE_CONNECTION_URL
  value: {{ printf "postgresql+asyncpg://%s:$(PREFECT_DB_PASSWORD)@%s:5432/%s" .Values.postgresql.username (include "pressroom.postgresqlHost" .) .Values.postgresql.prefectDatabase | quote }}
{{- else }}
- name: PREFECT_API_DATABASE_CONNECTION_URL
  valueFrom:
    secretKeyRef:
      name: {{ required "prefect.database.existingSecret (or postgresql.enabled) is required" .Values.prefect.database.existingSecret }}
      key: {{ .Values.prefect.database.existingSecretKey }}
{{- end }}
{{- end }}

{{/* The secret environment a process needs, by need: (dict "ctx" $ "needs" (list "database"
     "operator" "purge" "s3")). A worker or the site gets no database URL and no operator token. */}}
{{- define "pressroom.secretEnv" -}}
{{- $ctx := .ctx }}
{{- if has "database" .needs }}
{{ include "pressroom.databaseEnv" $ctx | trim }}
{{- end }}
{{- if has "operator" .needs }}
- name: PRESSROOM_OPERATOR_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "pressroom.authSecret" $ctx }}
      key: PRESSROOM_OPERATOR_TOKEN
{{- end }}
{{- if has "session" .needs }}
- name: PRESSROOM_SESSION_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "pressroom.authSecret" $ctx }}
      key: PRESSROOM_SESSION_SECRET
      {{- if $ctx.Values.auth.existingSecret }}
      optional: true  # an existing Secret made before the key: each process then draws its own, with a warning
      {{- end }}
{{- end }}
{{- if and (has "metrics" .needs) $ctx.Values.metrics.enabled }}
- name: PRESSROOM_METRICS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "pressroom.metricsSecret" $ctx }}
      key: {{ $ctx.Values.metrics.existingSecretKey }}
{{- end }}
{{- if has "purge" .needs }}
- name: PRESSROOM_PURGE_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "pressroom.authSecret" $ctx }}
      key: PRESSROOM_PURGE_SECRET
{{- end }}
{{- $s3 := $ctx.Values.objectStore.s3 }}
{{- if and (has "s3" .needs) (eq $ctx.Values.objectStore.kind "s3") (or $s3.existingSecret $s3.accessKey) }}
{{- $name := default (printf "%s-s3" (include "pressroom.fullname" $ctx)) $s3.existingSecret }}
- name: PRESSROOM_S3_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $name }}
      key: PRESSROOM_S3_ACCESS_KEY
- name: PRESSROOM_S3_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $name }}
      key: PRESSROOM_S3_SECRET_KEY
{{- end }}
{{- end }}

{{/* A value generated once and then read back from the live Secret on upgrades.
     Call with (dict "ctx" $ "secret" NAME "key" KEY "value" GIVEN). */}}
{{- define "pressroom.stableSecretValue" -}}
{{- if .value }}
{{- .value }}
{{- else }}
{{- $live := lookup "v1" "Secret" .ctx.Release.Namespace .secret }}
{{- if and $live $live.data (hasKey $live.data .key) }}
{{- index $live.data .key | b64dec }}
{{- else }}
{{- randAlphaNum 40 }}
{{- end }}
{{- end }}
{{- end }}

{{/* Pods ---------------------------------------------------------------------------- */}}

{{- define "pressroom.podSecurityContext" -}}
{{ toYaml .Values.podSecurityContext }}
{{- end }}

{{- define "pressroom.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The pod template of a Pressroom process: the control plane, the site server, a runtime.
     Call with (dict "ctx" $ "component" NAME "args" LIST "port" PORT-or-nil "needs" LIST
                     "resources" MAP "scheduling" MAP), and optionally "env" (a YAML list of
     further env entries), "data" ("none": no data volume; "readOnly": all of it, read-only;
     else a subPath of the volume, e.g. "shards/a", the only part the pod sees), "metrics"
     (true: the process serves /metrics on its port; it gets the prometheus.io annotations). */}}
{{- define "pressroom.podTemplate" -}}
{{- $ctx := .ctx -}}
metadata:
  labels:
    {{- include "pressroom.labels" (dict "ctx" $ctx "component" .component) | nindent 4 }}
  annotations:
    checksum/config: {{ include (print $ctx.Template.BasePath "/configmap.yaml") $ctx | sha256sum }}
    {{- if and .metrics .port $ctx.Values.metrics.enabled $ctx.Values.metrics.podAnnotations }}
    prometheus.io/scrape: "true"
    prometheus.io/port: {{ .port | quote }}
    prometheus.io/path: /metrics
    {{- end }}
spec:
  serviceAccountName: {{ include "pressroom.serviceAccountName" $ctx }}
  automountServiceAccountToken: {{ $ctx.Values.serviceAccount.automountToken }}
  {{- with $ctx.Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- include "pressroom.podSecurityContext" $ctx | nindent 4 }}
  {{- with include "pressroom.scheduling" .scheduling | trim }}
  {{- . | nindent 2 }}
  {{- end }}
  {{- with .terminationGracePeriodSeconds }}
  terminationGracePeriodSeconds: {{ . }}
  {{- end }}
  containers:
    - name: {{ .component }}
      image: {{ include "pressroom.image" $ctx }}
      imagePullPolicy: {{ $ctx.Values.image.pullPolicy }}
      command: ["python", "-m", "control_plane.cli"]
      args:
        {{- toYaml .args | nindent 8 }}
      envFrom:
        - configMapRef:
            name: {{ include "pressroom.fullname" $ctx }}-env
      {{- $env := include "pressroom.secretEnv" (dict "ctx" $ctx "needs" .needs) | trim }}
      {{- if or $env .env }}
      env:
        {{- with $env }}
        {{- . | nindent 8 }}
        {{- end }}
        {{- with .env }}
        {{- . | trim | nindent 8 }}
        {{- end }}
      {{- end }}
      {{- if .port }}
      ports:
        - name: http
          containerPort: {{ .port }}
          protocol: TCP
      startupProbe:
        httpGet: {path: /healthz, port: http}
        periodSeconds: 2
        failureThreshold: 60
      readinessProbe:
        httpGet: {path: /healthz, port: http}
        periodSeconds: 5
        timeoutSeconds: 3
      livenessProbe:
        httpGet: {path: /healthz, port: http}
        periodSeconds: 10
        timeoutSeconds: 5
        failureThreshold: 3
      {{- end }}
      resources:
        {{- toYaml .resources | nindent 8 }}
      securityContext:
        {{- toYaml $ctx.Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: tmp
          mountPath: /tmp
        {{- if ne (toString .data) "none" }}
        - name: data
          mountPath: /var/lib/pressroom
          {{- if eq (toString .data) "readOnly" }}
          readOnly: true
          {{- else if .data }}
          subPath: {{ .data }}
          {{- end }}
        {{- end }}
  volumes:
    - name: tmp
      emptyDir: {}
    {{- if ne (toString .data) "none" }}
    - name: data
      {{- if $ctx.Values.persistence.enabled }}
      persistentVolumeClaim:
        claimName: {{ default (printf "%s-data" (include "pressroom.fullname" $ctx)) $ctx.Values.persistence.existingClaim }}
      {{- else }}
      emptyDir: {}
      {{- end }}
    {{- end }}
{{- end }}

{{/* Shards -------------------------------------------------------------------------- */}}

{{- define "pressroom.shardSecret" -}}
{{- default (printf "%s-shard-%s" (include "pressroom.fullname" .ctx) .shard.name) .shard.existingSecret }}
{{- end }}

{{- define "pressroom.shardSecretVar" -}}
{{- printf "PRESSROOM_SHARD_SECRET_%s" (.name | upper | replace "-" "_") }}
{{- end }}

{{/* The control plane's routing: each shard's secret from its Secret, then PRESSROOM_SHARDS
     (JSON) built from them with Kubernetes' $(VAR) expansion, so no secret sits in values. */}}
{{- define "pressroom.shardsEnv" -}}
{{- $shards := dict }}
{{- range $shard := .Values.shards }}
- name: {{ include "pressroom.shardSecretVar" $shard }}
  valueFrom:
    secretKeyRef:
      name: {{ include "pressroom.shardSecret" (dict "ctx" $ "shard" $shard) }}
      key: PRESSROOM_RUNTIME_SECRET
{{- $url := printf "http://%s-shard-%s:%v" (include "pressroom.fullname" $) $shard.name $.Values.runtime.port }}
{{- $_ := set $shards $shard.name (dict "url" $url "secret" (printf "$(%s)" (include "pressroom.shardSecretVar" $shard))) }}
{{- end }}
- name: PRESSROOM_SHARDS
  value: {{ toJson $shards | quote }}
- name: PRESSROOM_DEFAULT_SHARD
  value: {{ .Values.defaultShard | quote }}
- name: PRESSROOM_RUNTIME_TIMEOUT_SECONDS
  value: {{ .Values.runtime.timeoutSeconds | quote }}
- name: PRESSROOM_MOVE_DRAIN_SECONDS
  value: {{ .Values.runtime.moveDrainSeconds | quote }}
{{- end }}

{{/* A NetworkPolicy peer: the pods of this release with a component, (dict "ctx" $ "component" NAME). */}}
{{- define "pressroom.peer" -}}
- podSelector:
    matchLabels:
      app.kubernetes.io/name: {{ include "pressroom.name" .ctx }}
      app.kubernetes.io/instance: {{ .ctx.Release.Name }}
      app.kubernetes.io/component: {{ .component }}
{{- end }}
