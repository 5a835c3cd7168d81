package charts

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart under test, relative to this package.
const chartDir = "ration"

// kubeVersion is the cluster version the chart is rendered for: the first
// with in-place pod resize on by default.
const kubeVersion = "v1.33.0"

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// rendered is the output of one `helm template`.
type rendered struct {
	job *batchv1.Job
	// manifestJob is the hook Job of manifest.generate, nil without it.
	manifestJob *batchv1.Job
	notes       string
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return ch
}

// render renders the chart like `helm template batch ration -n work -f
// overrides.yaml --kube-version 1.33.0`: kubeVersion constraint, values
// schema, templates, then every manifest decoded strictly.
func render(t *testing.T, overrides string) (rendered, error) {
	t.Helper()
	vals, err := chartutil.ReadValues([]byte(overrides))
	if err != nil {
		t.Fatalf("test overrides are not YAML: %v", err)
	}
	return renderValues(t, vals)
}

// trialCommand is the run.command the tests render with when they set
// none: the chart has no default command (TestDefaultsNeedCommand).
var trialCommand = []any{"wc", "-l"}

// renderValues is render for values given as Go values, the way --set
// passes them (integers as int64), with run.command set to trialCommand
// unless vals sets it.
func renderValues(t *testing.T, vals map[string]any) (rendered, error) {
	t.Helper()
	return renderAt(t, kubeVersion, withCommand(vals))
}

// withCommand returns a copy of vals whose run.command is trialCommand
// when vals has no run.command.
func withCommand(vals map[string]any) map[string]any {
	out := maps.Clone(vals)
	if out == nil {
		out = map[string]any{}
	}
	run, _ := out["run"].(map[string]any)
	if _, ok := run["command"]; ok {
		return out
	}
	run = maps.Clone(run)
	if run == nil {
		run = map[string]any{}
	}
	run["command"] = trialCommand
	out["run"] = run
	return out
}

// renderAt renders vals as they are (no trial command) for a cluster of
// version kube, as `helm template --kube-version kube` does, or `helm
// install` on such a cluster: Chart.yaml's kubeVersion first (helm's own
// check, with its own message), then the schema and the templates.
func renderAt(t *testing.T, kube string, vals map[string]any) (rendered, error) {
	t.Helper()
	ch := loadChart(t)
	caps := chartutil.DefaultCapabilities.Copy()
	if kube != "" {
		kv, err := chartutil.ParseKubeVersion(kube)
		if err != nil {
			t.Fatal(err)
		}
		caps.KubeVersion = *kv
	}
	if ch.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return rendered{}, fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", ch.Metadata.KubeVersion, caps.KubeVersion.String())
	}
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{
		Name: "batch", Namespace: "work", IsInstall: true, Revision: 1,
	}, caps)
	if err != nil {
		return rendered{}, err
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		return rendered{}, err
	}
	var out rendered
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		content := files[name]
		if strings.HasSuffix(name, "NOTES.txt") {
			out.notes = content
			continue
		}
		for _, doc := range releaseutil.SplitManifests(content) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			obj, err := decodeStrict([]byte(doc))
			if err != nil {
				return rendered{}, fmt.Errorf("%s: %w\n%s", name, err, doc)
			}
			switch o := obj.(type) {
			case *batchv1.Job:
				if o.Annotations["helm.sh/hook"] != "" {
					if out.manifestJob != nil {
						return rendered{}, fmt.Errorf("%s: a second hook Job", name)
					}
					out.manifestJob = o
					continue
				}
				if out.job != nil {
					return rendered{}, fmt.Errorf("%s: a second Job", name)
				}
				out.job = o
			default:
				return rendered{}, fmt.Errorf("%s: unexpected object %T", name, obj)
			}
		}
	}
	if out.job == nil {
		return rendered{}, fmt.Errorf("no Job rendered")
	}
	return out, nil
}

// decodeStrict decodes one manifest into its k8s.io/api type. Unknown and
// duplicate fields are errors, so a misspelt or misplaced field (which the
// API server would drop or reject) fails the test.
func decodeStrict(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	var obj any
	switch tm.APIVersion + ", " + tm.Kind {
	case "batch/v1, Job":
		obj = &batchv1.Job{}
	default:
		return nil, fmt.Errorf("no Go type for apiVersion %q kind %q", tm.APIVersion, tm.Kind)
	}
	// YAMLToJSONStrict rejects duplicate keys; sigs.k8s.io/json then decodes
	// like the API server does, case-sensitively (encoding/json, and so
	// yaml.UnmarshalStrict, would take "securitycontext" for
	// securityContext).
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	strict, err := kjson.UnmarshalStrict(j, obj)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", tm.Kind, err)
	}
	if err := errors.Join(strict...); err != nil {
		return nil, fmt.Errorf("strict decode of %s: %w", tm.Kind, err)
	}
	return obj, nil
}

func mustRender(t *testing.T, overrides string) rendered {
	t.Helper()
	r, err := render(t, overrides)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

func mustRenderValues(t *testing.T, vals map[string]any) rendered {
	t.Helper()
	r, err := renderValues(t, vals)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

func ration(t *testing.T, spec *corev1.PodSpec) *corev1.Container {
	t.Helper()
	for i := range spec.Containers {
		if spec.Containers[i].Name == "ration" {
			return &spec.Containers[i]
		}
	}
	t.Fatal("no container named ration")
	return nil
}

func envValue(c *corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

func mountAt(c *corev1.Container, path string) (corev1.VolumeMount, bool) {
	for _, m := range c.VolumeMounts {
		if m.MountPath == path {
			return m, true
		}
	}
	return corev1.VolumeMount{}, false
}

func volume(spec *corev1.PodSpec, name string) (corev1.Volume, bool) {
	for _, v := range spec.Volumes {
		if v.Name == name {
			return v, true
		}
	}
	return corev1.Volume{}, false
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func ptrEq[T comparable](t *testing.T, what string, got *T, want T) {
	t.Helper()
	if got == nil {
		t.Errorf("%s unset, want %v", what, want)
		return
	}
	eq(t, what, *got, want)
}

func quantityEq(t *testing.T, what string, rl corev1.ResourceList, name corev1.ResourceName, want string) {
	t.Helper()
	got, ok := rl[name]
	if !ok {
		t.Errorf("%s.%s unset, want %s", what, name, want)
		return
	}
	if w := resource.MustParse(want); got.Cmp(w) != 0 {
		t.Errorf("%s.%s = %s, want %s", what, name, got.String(), want)
	}
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// checkJobInvariants asserts what must hold for every set of values.
func checkJobInvariants(t *testing.T, job *batchv1.Job) {
	t.Helper()
	spec := &job.Spec
	if len(job.Name) > 63 || !dnsLabel.MatchString(job.Name) {
		t.Errorf("Job name %q is not a DNS label of at most 63 characters", job.Name)
	}
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode = %v, want Indexed", spec.CompletionMode)
	}
	if spec.Completions == nil || *spec.Completions < 1 {
		t.Fatalf("completions = %v, want >= 1", spec.Completions)
	}
	if spec.Parallelism == nil || *spec.Parallelism < 1 || *spec.Parallelism > *spec.Completions {
		t.Errorf("parallelism = %v, want 1..completions", spec.Parallelism)
	}
	if spec.BackoffLimitPerIndex == nil {
		t.Error("backoffLimitPerIndex unset")
	}
	if spec.MaxFailedIndexes == nil || *spec.MaxFailedIndexes > *spec.Completions {
		t.Errorf("maxFailedIndexes = %v, want set and <= completions", spec.MaxFailedIndexes)
	}
	ptrEq(t, "podReplacementPolicy", spec.PodReplacementPolicy, batchv1.Failed)
	checkPodFailurePolicy(t, spec.PodFailurePolicy)

	pod := &spec.Template.Spec
	eq(t, "restartPolicy", pod.RestartPolicy, corev1.RestartPolicyNever)
	ptrEq(t, "automountServiceAccountToken", pod.AutomountServiceAccountToken, false)
	checkRestricted(t, pod)

	c := ration(t, pod)
	if n, ok := envValue(c, "RATION_SHARD_COUNT"); !ok || n != fmt.Sprint(*spec.Completions) {
		t.Errorf("RATION_SHARD_COUNT = %q (set %v), want completions %d", n, ok, *spec.Completions)
	}
	if _, ok := envValue(c, "JOB_COMPLETION_INDEX"); ok {
		t.Error("JOB_COMPLETION_INDEX must come from the Job controller, not the chart")
	}
	if c.Resources.Limits.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("limits %v: cpu and memory must be set, ration sizes itself from them", c.Resources.Limits)
	}
	// The API server refuses a request above its limit.
	for name, req := range c.Resources.Requests {
		if lim, ok := c.Resources.Limits[name]; ok && req.Cmp(lim) > 0 {
			t.Errorf("requests.%s = %s exceeds limits.%s = %s", name, req.String(), name, lim.String())
		}
	}
	if len(c.Command) != 0 {
		t.Errorf("command = %q: the image's ENTRYPOINT (/ration) must stay", c.Command)
	}
	if len(c.Args) == 0 || c.Args[0] != "run" || !slices.Contains(c.Args, "--") {
		t.Fatalf("args = %q, want run [flags] -- command", c.Args)
	}
	flags := c.Args[:slices.Index(c.Args, "--")]
	// terminationGracePeriodSeconds must exceed --term-timeout, or the
	// kubelet SIGKILLs ration before it has stopped its jobs.
	var term string
	for _, a := range flags {
		if v, ok := strings.CutPrefix(a, "--term-timeout="); ok {
			term = v
		}
	}
	var termSec int64
	if _, err := fmt.Sscanf(term, "%ds", &termSec); err != nil {
		t.Fatalf("--term-timeout=%q: %v", term, err)
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g < termSec+5 {
		t.Errorf("terminationGracePeriodSeconds = %v, want >= --term-timeout %ds + 5", g, termSec)
	}
	// Each shard writes its own joblog.
	if !slices.ContainsFunc(flags, func(a string) bool {
		return strings.HasPrefix(a, "--joblog=") && strings.Contains(a, "$(JOB_COMPLETION_INDEX)")
	}) {
		t.Errorf("flags %q: want --joblog=...$(JOB_COMPLETION_INDEX)...", flags)
	}
	if m, ok := mountAt(c, "/tmp"); !ok {
		t.Error("no /tmp mount (the root filesystem is read-only)")
	} else if v, _ := volume(pod, m.Name); v.EmptyDir == nil {
		t.Errorf("/tmp volume %q is not an emptyDir", m.Name)
	}
	for _, m := range c.VolumeMounts {
		if _, ok := volume(pod, m.Name); !ok {
			t.Errorf("mount %q: no such volume", m.Name)
		}
	}
}

// checkPodFailurePolicy asserts the three rules: disruptions ignored, usage
// errors (255) fail the Job, job failures (1..101) fail only the index.
func checkPodFailurePolicy(t *testing.T, p *batchv1.PodFailurePolicy) {
	t.Helper()
	if p == nil || len(p.Rules) != 3 {
		t.Fatalf("podFailurePolicy = %+v, want 3 rules", p)
	}
	r := p.Rules[0]
	if r.Action != batchv1.PodFailurePolicyActionIgnore || len(r.OnPodConditions) != 1 ||
		r.OnPodConditions[0].Type != corev1.DisruptionTarget || r.OnPodConditions[0].Status != corev1.ConditionTrue {
		t.Errorf("rule 0 = %+v, want Ignore on DisruptionTarget=True", r)
	}
	want := []struct {
		action batchv1.PodFailurePolicyAction
		codes  []int32
	}{
		{batchv1.PodFailurePolicyActionFailJob, []int32{255}},
		{batchv1.PodFailurePolicyActionFailIndex, nil},
	}
	for i := int32(1); i <= 101; i++ {
		want[1].codes = append(want[1].codes, i)
	}
	for i, w := range want {
		r := p.Rules[i+1]
		e := r.OnExitCodes
		if r.Action != w.action || e == nil || e.Operator != batchv1.PodFailurePolicyOnExitCodesOpIn ||
			e.ContainerName == nil || *e.ContainerName != "ration" || !slices.Equal(e.Values, w.codes) {
			t.Errorf("rule %d = %+v %+v, want %s on ration exit codes In %v", i+1, r, e, w.action, w.codes)
		}
	}
}

// checkRestricted asserts the "restricted" Pod Security Standard for every
// container, init containers included.
func checkRestricted(t *testing.T, pod *corev1.PodSpec) {
	t.Helper()
	psc := pod.SecurityContext
	if psc == nil {
		t.Fatal("pod securityContext unset")
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Error("host namespaces are not allowed")
	}
	for _, v := range pod.Volumes {
		if v.EmptyDir == nil && v.PersistentVolumeClaim == nil {
			t.Errorf("volume %q: only emptyDir and persistentVolumeClaim are used", v.Name)
		}
	}
	ptrEq(t, "pod runAsNonRoot", psc.RunAsNonRoot, true)
	ptrEq(t, "pod runAsUser", psc.RunAsUser, 65532)
	ptrEq(t, "pod runAsGroup", psc.RunAsGroup, 65532)
	if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod seccompProfile = %+v, want RuntimeDefault", psc.SeccompProfile)
	}
	all := append(slices.Clone(pod.InitContainers), pod.Containers...)
	for _, c := range all {
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("container %s: securityContext unset", c.Name)
			continue
		}
		ptrEq(t, c.Name+" allowPrivilegeEscalation", sc.AllowPrivilegeEscalation, false)
		ptrEq(t, c.Name+" readOnlyRootFilesystem", sc.ReadOnlyRootFilesystem, true)
		ptrEq(t, c.Name+" runAsNonRoot", sc.RunAsNonRoot, true)
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("container %s is privileged", c.Name)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			t.Errorf("container %s runs as root", c.Name)
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("container %s capabilities = %+v, want drop [ALL], add none", c.Name, sc.Capabilities)
		}
		if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("container %s seccompProfile = %+v, want RuntimeDefault", c.Name, sc.SeccompProfile)
		}
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				t.Errorf("container %s uses hostPort %d", c.Name, p.HostPort)
			}
		}
	}
}

func TestChartMetadata(t *testing.T) {
	ch := loadChart(t)
	md := ch.Metadata
	eq(t, "apiVersion", md.APIVersion, chart.APIVersionV2)
	eq(t, "type", md.Type, "application")
	if err := md.Validate(); err != nil {
		t.Errorf("Chart.yaml: %v", err)
	}
}

// TestKubeVersionRefusedInOneLine: the Job needs Kubernetes 1.29
// (backoffLimitPerIndex, the FailIndex action, podReplacementPolicy; an
// older API server drops them silently). An older version, and helm
// template's built-in default when --kube-version is not given ("" here),
// is refused with one line that says what to set; helm's own kubeVersion
// check said neither.
func TestKubeVersionRefusedInOneLine(t *testing.T) {
	for kube, ok := range map[string]bool{
		"": false, "v1.28.9": false, "v1.29.0": true, "v1.29.0-rc.1": true, "v1.30.4-gke.1348000": true, kubeVersion: true, "v1.35.1": true,
	} {
		r, err := renderAt(t, kube, withCommand(nil))
		switch {
		case ok && err != nil:
			t.Errorf("kube %q: %v", kube, err)
		case ok:
			checkJobInvariants(t, r.job)
		case err == nil:
			t.Errorf("kube %q: rendered, want it refused", kube)
		default:
			msg := err.Error()
			for _, w := range []string{"Kubernetes 1.29", "--kube-version"} {
				if !strings.Contains(msg, w) {
					t.Errorf("kube %q: error does not say %q:\n%s", kube, w, msg)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("kube %q: error is not one line:\n%s", kube, msg)
			}
		}
	}
}

// TestDefaultsNeedCommand: the chart has no default run.command (a
// program the default image, which holds only /ration, would not have), so
// its defaults are refused with one line naming run.command and the image,
// not installed as a Job whose every job fails at exec.
func TestDefaultsNeedCommand(t *testing.T) {
	for _, vals := range []map[string]any{nil, {"run": map[string]any{"command": nil}}} {
		_, err := renderAt(t, kubeVersion, vals)
		if err == nil {
			t.Fatalf("values %v rendered without a run.command", vals)
		}
		msg := err.Error()
		for _, w := range []string{"run.command", "image.repository", "/ration"} {
			if !strings.Contains(msg, w) {
				t.Errorf("values %v: error does not name %s:\n%s", vals, w, msg)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("values %v: error is not one line:\n%s", vals, msg)
		}
	}
}

// TestRenderDefaults renders the defaults with the one value the chart
// requires, run.command.
func TestRenderDefaults(t *testing.T) {
	r := mustRender(t, "")
	job := r.job
	checkJobInvariants(t, job)

	eq(t, "name", job.Name, "batch-ration-1")
	for k, v := range map[string]string{
		"helm.sh/chart":                "ration-0.1.0",
		"app.kubernetes.io/name":       "ration",
		"app.kubernetes.io/instance":   "batch",
		"app.kubernetes.io/version":    "0.1.0",
		"app.kubernetes.io/managed-by": "Helm",
	} {
		eq(t, "label "+k, job.Labels[k], v)
	}
	spec := job.Spec
	ptrEq(t, "completions", spec.Completions, 1)
	ptrEq(t, "parallelism", spec.Parallelism, 1)
	ptrEq(t, "backoffLimitPerIndex", spec.BackoffLimitPerIndex, 1)
	ptrEq(t, "maxFailedIndexes", spec.MaxFailedIndexes, 1)
	ptrEq(t, "ttlSecondsAfterFinished", spec.TTLSecondsAfterFinished, 86400)
	if spec.ActiveDeadlineSeconds != nil {
		t.Errorf("activeDeadlineSeconds = %d, want unset", *spec.ActiveDeadlineSeconds)
	}
	pod := &spec.Template.Spec
	ptrEq(t, "terminationGracePeriodSeconds", pod.TerminationGracePeriodSeconds, 35)
	if len(pod.InitContainers) != 0 {
		t.Errorf("init containers %v, want none by default", pod.InitContainers)
	}
	if len(spec.Template.Annotations) != 0 {
		t.Errorf("pod annotations %v, want none without metrics", spec.Template.Annotations)
	}
	c := ration(t, pod)
	eq(t, "image", c.Image, "ghcr.io/ration-run/ration:0.1.0")
	eq(t, "workingDir", c.WorkingDir, "/input")
	wantArgs := []string{
		"run", "--files=**/*", "--exit-count", "--term-timeout=20s",
		"--joblog=/output/joblog-1-$(JOB_COMPLETION_INDEX).tsv", "--resume-failed",
		"--no-bar", "--", "wc", "-l",
	}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args\n got %q\nwant %q", c.Args, wantArgs)
	}
	if v, _ := envValue(c, "RATION_OUTPUT_DIR"); v != "/output" {
		t.Errorf("RATION_OUTPUT_DIR = %q, want /output", v)
	}
	quantityEq(t, "limits", c.Resources.Limits, corev1.ResourceCPU, "2")
	quantityEq(t, "limits", c.Resources.Limits, corev1.ResourceMemory, "2Gi")
	quantityEq(t, "requests", c.Resources.Requests, corev1.ResourceCPU, "2")
	if len(c.Ports) != 0 {
		t.Errorf("ports %v, want none without metrics", c.Ports)
	}
	if m, ok := mountAt(c, "/input"); !ok || !m.ReadOnly {
		t.Errorf("/input mount = %+v (found %v), want read-only", m, ok)
	}
	for _, name := range []string{"input", "output"} {
		if v, ok := volume(pod, name); !ok || v.EmptyDir == nil {
			t.Errorf("volume %s = %+v, want an emptyDir by default", name, v)
		}
	}
	if !strings.Contains(r.notes, "kubectl -n work get job batch-ration-1") ||
		!strings.Contains(r.notes, "WARNING: output.existingClaim is empty") {
		t.Errorf("NOTES.txt lacks the watch command or the emptyDir warning:\n%s", r.notes)
	}
	if !strings.Contains(r.notes, "WARNING: image.repository is ration's own image") || !strings.Contains(r.notes, `"wc"`) {
		t.Errorf("NOTES.txt does not warn that wc is not in ration's image:\n%s", r.notes)
	}
	r = mustRender(t, "run: {command: [/ration, limits]}")
	if strings.Contains(r.notes, "image.repository") {
		t.Errorf("NOTES.txt warns about the image although the command is /ration:\n%s", r.notes)
	}
}

// fullOverrides sets every value away from its default.
const fullOverrides = `
runId: "20261120-2"
shards: 8
parallelism: 3
maxFailedIndexes: 2
backoffLimitPerIndex: 0
activeDeadlineSeconds: 3600
ttlSecondsAfterFinished: 600
termTimeoutSeconds: 60
image: {repository: registry.example/ration, tag: v1.2.3, pullPolicy: Always}
run:
  command: [sh, -c, 'analyze "$1" > "$RATION_OUTPUT_DIR/$(basename "$1").txt"', sh]
  files: ["src/**/*.c", "include/**/*.h"]
  exclude: ["**/vendor/**"]
  jobs: 50%
  memPerJob: 512Mi
  timeout: 10m
  retries: 2
  halt: now,fail=10
  stallTimeout: "300"
  resume: false
  logFormat: text
  extraArgs: [--keep-order]
input: {existingClaim: corpus, subPath: v3}
output: {existingClaim: results}
resources:
  requests: {cpu: 1500m, memory: 3Gi}
  limits: {cpu: 1500m, memory: 3Gi}
metrics: {enabled: true, port: 9191}
podAnnotations: {team: data}
podLabels: {cost-center: c42}
extraEnv: [{name: LANG, value: C.UTF-8}]
nodeSelector: {pool: batch}
tolerations: [{key: batch, operator: Exists, effect: NoSchedule}]
`

func TestRenderOverrides(t *testing.T) {
	r := mustRender(t, fullOverrides)
	job := r.job
	checkJobInvariants(t, job)
	eq(t, "name", job.Name, "batch-ration-20261120-2")
	spec := job.Spec
	ptrEq(t, "completions", spec.Completions, 8)
	ptrEq(t, "parallelism", spec.Parallelism, 3)
	ptrEq(t, "maxFailedIndexes", spec.MaxFailedIndexes, 2)
	ptrEq(t, "backoffLimitPerIndex", spec.BackoffLimitPerIndex, 0)
	ptrEq(t, "activeDeadlineSeconds", spec.ActiveDeadlineSeconds, 3600)
	ptrEq(t, "ttlSecondsAfterFinished", spec.TTLSecondsAfterFinished, 600)
	pod := &spec.Template.Spec
	ptrEq(t, "terminationGracePeriodSeconds", pod.TerminationGracePeriodSeconds, 75)
	eq(t, "nodeSelector pool", pod.NodeSelector["pool"], "batch")
	if len(pod.Tolerations) != 1 || pod.Tolerations[0].Key != "batch" {
		t.Errorf("tolerations = %+v", pod.Tolerations)
	}
	ann := spec.Template.Annotations
	eq(t, "annotation team", ann["team"], "data")
	eq(t, "annotation prometheus.io/scrape", ann["prometheus.io/scrape"], "true")
	eq(t, "annotation prometheus.io/port", ann["prometheus.io/port"], "9191")
	eq(t, "annotation prometheus.io/path", ann["prometheus.io/path"], "/metrics")
	eq(t, "label cost-center", spec.Template.Labels["cost-center"], "c42")

	c := ration(t, pod)
	eq(t, "image", c.Image, "registry.example/ration:v1.2.3")
	eq(t, "imagePullPolicy", c.ImagePullPolicy, corev1.PullAlways)
	wantArgs := []string{
		"run", "--files=src/**/*.c", "--files=include/**/*.h", "--exclude=**/vendor/**",
		"-j", "50%", "--mem-per-job=512Mi", "--timeout=10m", "--retries=2", "--halt=now,fail=10",
		"--exit-count", "--stall-timeout=300", "--term-timeout=60s", "--joblog=/output/joblog-20261120-2-$(JOB_COMPLETION_INDEX).tsv",
		"--log-format=text", "--no-bar", "--metrics-addr=:9191", "--keep-order",
		"--", "sh", "-c", `analyze "$1" > "$RATION_OUTPUT_DIR/$(basename "$1").txt"`, "sh",
	}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args\n got %q\nwant %q", c.Args, wantArgs)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 9191 {
		t.Errorf("ports = %+v, want metrics 9191", c.Ports)
	}
	if v, ok := envValue(c, "LANG"); !ok || v != "C.UTF-8" {
		t.Errorf("LANG = %q, %v", v, ok)
	}
	quantityEq(t, "limits", c.Resources.Limits, corev1.ResourceCPU, "1500m")
	quantityEq(t, "limits", c.Resources.Limits, corev1.ResourceMemory, "3Gi")

	in, _ := volume(pod, "input")
	if p := in.PersistentVolumeClaim; p == nil || p.ClaimName != "corpus" || !p.ReadOnly {
		t.Errorf("input volume = %+v, want read-only claim corpus", in)
	}
	if m, _ := mountAt(c, "/input"); m.SubPath != "v3" || !m.ReadOnly {
		t.Errorf("input mount = %+v, want subPath v3 read-only", m)
	}
	out, _ := volume(pod, "output")
	if p := out.PersistentVolumeClaim; p == nil || p.ClaimName != "results" || p.ReadOnly {
		t.Errorf("output volume = %+v, want writable claim results", out)
	}
	if strings.Contains(r.notes, "WARNING") {
		t.Errorf("NOTES.txt warns although both claims are set:\n%s", r.notes)
	}
}

func TestRenderInitContainerInput(t *testing.T) {
	r := mustRender(t, `
input:
  init:
    enabled: true
    image: alpine/git:2.47.2
    command: [git, clone, --depth=1, "https://example.com/repo.git", /input/repo]
    sizeLimit: 4Gi
`)
	checkJobInvariants(t, r.job)
	pod := &r.job.Spec.Template.Spec
	if len(pod.InitContainers) != 1 {
		t.Fatalf("init containers = %d, want 1", len(pod.InitContainers))
	}
	ic := pod.InitContainers[0]
	eq(t, "init image", ic.Image, "alpine/git:2.47.2")
	if m, ok := mountAt(&ic, "/input"); !ok || m.ReadOnly {
		t.Errorf("init container /input mount = %+v, want writable", m)
	}
	in, _ := volume(pod, "input")
	if in.EmptyDir == nil || in.EmptyDir.SizeLimit == nil || in.EmptyDir.SizeLimit.Cmp(resource.MustParse("4Gi")) != 0 {
		t.Errorf("input volume = %+v, want emptyDir of 4Gi", in)
	}
	if strings.Contains(r.notes, "input directory is") {
		t.Errorf("NOTES.txt warns of an empty input although init fills it:\n%s", r.notes)
	}
}

func TestRenderLongNamesStayDNSLabels(t *testing.T) {
	long := strings.Repeat("x", 42)
	r := mustRender(t, "fullnameOverride: "+long+"\nrunId: '"+strings.Repeat("7", 20)+"'\n")
	checkJobInvariants(t, r.job)
	eq(t, "name length", len(r.job.Name), 63)

	// A numeric run id, from a values file (float64) or --set (int64).
	r = mustRender(t, "runId: 1763683200\n")
	eq(t, "name", r.job.Name, "batch-ration-1763683200")
	r = mustRenderValues(t, map[string]any{"runId": int64(1763683200)})
	eq(t, "name", r.job.Name, "batch-ration-1763683200")

	// "batch-<name>" cut at 42 characters ends in '-', which must go.
	r = mustRender(t, "nameOverride: "+strings.Repeat("n", 35)+"-x\n")
	checkJobInvariants(t, r.job)
	eq(t, "name", r.job.Name, "batch-"+strings.Repeat("n", 35)+"-1")
}

// TestRejectedValues checks that bad values fail with a message naming the
// value and the rule, as `helm install` would print it.
func TestRejectedValues(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		want         []string // all must appear in the error
	}{
		{"zero shards", "shards: 0", []string{"/shards", "minimum", "want 1"}},
		{"negative shards", "shards: -3", []string{"/shards", "minimum"}},
		{"shards not a number", "shards: many", []string{"/shards", "want integer"}},
		{"fractional shards", "shards: 2.5", []string{"/shards", "want integer"}},
		{"unknown top-level key", "shardz: 4", []string{"additional properties 'shardz' not allowed"}},
		{"unknown nested key", "run: {fils: ['*.c']}", []string{"/run", "additional properties 'fils' not allowed"}},
		{"unknown key in resources", "resources: {limits: {gpu: 1}}", []string{"/resources/limits", "'gpu' not allowed"}},
		{"memory limit removed", "resources: {limits: {memory: null}}", []string{"/resources/limits", "missing property 'memory'"}},
		{"bad cpu quantity", "resources: {limits: {cpu: two}}", []string{"/resources/limits/cpu"}},
		{"runId with capitals", "runId: Run_1", []string{"/runId", "does not match pattern"}},
		{"runId too long", "runId: " + strings.Repeat("a", 21), []string{"/runId", "maxLength"}},
		{"resumeFrom with capitals", "resumeFrom: Run_1", []string{"/resumeFrom", "does not match pattern"}},
		{"negative term timeout", "termTimeoutSeconds: -1", []string{"/termTimeoutSeconds", "minimum"}},
		{"margin too small", "terminationGraceMarginSeconds: 1", []string{"/terminationGraceMarginSeconds", "minimum"}},
		{"metrics port out of range", "metrics: {port: 70000}", []string{"/metrics/port", "maximum"}},
		{"memPerJob a fraction of a byte", "run: {memPerJob: '1.5'}", []string{"/run/memPerJob", "does not match pattern"}},
		{"jobs zero", "run: {jobs: '0'}", []string{"/run/jobs", "does not match pattern"}},
		{"jobs zero percent", "run: {jobs: '0%'}", []string{"/run/jobs", "does not match pattern"}},
		{"jobs sign only", "run: {jobs: '+'}", []string{"/run/jobs", "does not match pattern"}},
		{"bad timeout", "run: {timeout: soon}", []string{"/run/timeout", "does not match pattern"}},
		{"empty command", "run: {command: []}", []string{"/run/command", "minItems"}},
		{"relative mount", "input: {mountPath: data}", []string{"/input/mountPath", "does not match pattern"}},
		{"init without image", "input: {init: {enabled: true}}", []string{"/input/init"}},
		{"bad pull policy", "image: {pullPolicy: Sometimes}", []string{"/image/pullPolicy"}},
		{"extraEnv overrides the shard count", "shards: 4\nextraEnv: [{name: RATION_SHARD_COUNT, value: '8'}]", []string{"/extraEnv/0/name"}},
		{"extraEnv overrides the index", "extraEnv: [{name: JOB_COMPLETION_INDEX, value: '0'}]", []string{"/extraEnv/0/name"}},
		{"extraEnv overrides the output dir", "extraEnv: [{name: RATION_OUTPUT_DIR, value: /tmp}]", []string{"/extraEnv/0/name"}},
		{"max failed above shards", "shards: 2\nmaxFailedIndexes: 3", []string{"maxFailedIndexes (3) must not exceed shards (2)"}},
		{"manifest without shared volumes", "manifest: {generate: true}", []string{"manifest.generate needs input.existingClaim and output.existingClaim"}},
		{"manifest generated and given", "input: {existingClaim: in}\noutput: {existingClaim: out}\nmanifest: {generate: true, path: m.txt}", []string{"manifest.generate and manifest.path exclude each other"}},
		{"manifest unknown key", "manifest: {walk: once}", []string{"/manifest"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, tc.values)
			if err == nil {
				t.Fatalf("values %q were accepted", tc.values)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not mention %q:\n%s", w, msg)
				}
			}
			if n := strings.Count(strings.TrimSpace(msg), "\n"); n > 6 {
				t.Errorf("error is %d lines long, want a short readable message:\n%s", n+1, msg)
			}
			t.Logf("%s", msg)
		})
	}
}

// TestAcceptedEdgeValues checks values at the edges of what the schema
// allows.
func TestAcceptedEdgeValues(t *testing.T) {
	for _, values := range []string{
		"shards: 1",
		"shards: 100000\nmaxFailedIndexes: 0",
		"parallelism: null\nactiveDeadlineSeconds: null\nttlSecondsAfterFinished: null",
		"resources: {limits: {cpu: 0.5, memory: 268435456}, requests: {cpu: 250m, memory: 128Mi}}",
		"run: {jobs: '4'}\ntermTimeoutSeconds: 0",
		// -j as ration run takes it: GNU parallel's +N/-N and a fractional share.
		"run: {jobs: '+2'}", "run: {jobs: '-1'}", "run: {jobs: '12.5%'}", "run: {jobs: '.5%'}",
		"run: {memPerJob: 1.5GiB, timeout: '0.5', stallTimeout: 1h30m}", "run: {memPerJob: '4096.0'}", "run: {memPerJob: 64k}", "run: {memPerJob: auto}",
		"tmpSizeLimit: ''",
		"global: {imageRegistry: example.com}",
	} {
		r, err := render(t, values)
		if err != nil {
			t.Errorf("values %q rejected: %v", values, err)
			continue
		}
		checkJobInvariants(t, r.job)
	}
	// Limits set alone (--set resources.limits.cpu=4 ...) are the
	// requests too: Guaranteed QoS, and never a request above its limit.
	for _, values := range []string{
		"resources: {limits: {cpu: 1, memory: 1Gi}}",
		"resources: {limits: {cpu: 8, memory: 16Gi}}",
	} {
		r := mustRender(t, values)
		checkJobInvariants(t, r.job)
		c := ration(t, &r.job.Spec.Template.Spec)
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			lim := c.Resources.Limits[name]
			quantityEq(t, values+": requests", c.Resources.Requests, name, lim.String())
		}
	}
	// null removes the TTL: the Job then stays until deleted.
	r := mustRender(t, "ttlSecondsAfterFinished: null")
	if r.job.Spec.TTLSecondsAfterFinished != nil {
		t.Errorf("ttlSecondsAfterFinished = %d, want unset", *r.job.Spec.TTLSecondsAfterFinished)
	}
}

// TestStrictDecodeRejectsUnknownFields proves the decoder the other tests
// rely on fails on what the API server would not accept as written.
func TestStrictDecodeRejectsUnknownFields(t *testing.T) {
	good := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  completionMode: Indexed\n"
	if _, err := decodeStrict([]byte(good)); err != nil {
		t.Fatalf("good manifest rejected: %v", err)
	}
	for _, bad := range []string{
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  completionMod: Indexed\n",
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      containers: [{name: a, securitycontext: {}}]\n",
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {parallelism: 1, parallelism: 2}\n",
		"apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: x}\n",
	} {
		if _, err := decodeStrict([]byte(bad)); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}

// TestValuesDocumented checks that every key the schema allows has a default
// in values.yaml, where its comment is.
func TestValuesDocumented(t *testing.T) {
	s := readSchema(t)
	b, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var defaults map[string]any
	if err := yaml.Unmarshal(b, &defaults); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, schema, vals map[string]any)
	walk = func(path string, schema, vals map[string]any) {
		props, _ := schema["properties"].(map[string]any)
		for k, sub := range props {
			if path == "" && k == "global" {
				continue
			}
			v, ok := vals[k]
			if !ok {
				t.Errorf("%s%s: allowed by the schema but not in values.yaml", path, k)
				continue
			}
			sm, _ := sub.(map[string]any)
			if vm, ok := v.(map[string]any); ok && sm["properties"] != nil {
				walk(path+k+".", sm, vm)
			}
		}
	}
	walk("", s, defaults)
}

// TestArgsSurviveYAML renders awkward commands and patterns and checks that
// the container receives them byte for byte.
func TestArgsSurviveYAML(t *testing.T) {
	awkward := []string{
		`it's "quoted"`, "tab\there", "new\nline", `back\slash`, "# not a comment",
		"key: value", "- dash", "{}", "{.}.out", "*", "&anchor", "!tag", "@at", "%", "ünï-cödé ✓",
		"", " ", "null", "true", "0x10", "1e3", "$$(kept)", "\a\b\f\v", "\u2028",
	}
	vals := map[string]any{"run": map[string]any{
		"command": append([]any{"cmd"}, toAny(awkward)...),
		"files":   toAny(awkward[:5]),
	}}
	r := mustRenderValues(t, vals)
	c := ration(t, &r.job.Spec.Template.Spec)
	sep := slices.Index(c.Args, "--")
	if got := c.Args[sep+2:]; !slices.Equal(got, awkward) {
		t.Errorf("command after YAML:\n got %q\nwant %q", got, awkward)
	}
	var files []string
	for _, a := range c.Args[:sep] {
		if f, ok := strings.CutPrefix(a, "--files="); ok {
			files = append(files, f)
		}
	}
	if !slices.Equal(files, awkward[:5]) {
		t.Errorf("files after YAML:\n got %q\nwant %q", files, awkward[:5])
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestChartFlagsKnownToRation checks every flag the chart passes against the
// flags `ration run --help` of the binary built from this repository lists:
// an unknown flag would make every pod exit 255 and fail the Job.
func TestChartFlagsKnownToRation(t *testing.T) {
	known := runFlags(t, buildRation(t))
	chartFlags := func(values string) []string {
		c := ration(t, &mustRender(t, values).job.Spec.Template.Spec)
		var out []string
		for _, a := range c.Args[1:slices.Index(c.Args, "--")] {
			if strings.HasPrefix(a, "-") {
				name, _, _ := strings.Cut(a, "=")
				out = append(out, name)
			}
		}
		return out
	}
	for _, f := range chartFlags("") {
		if !known[f] {
			t.Errorf("the default values pass %s, which ration run does not know", f)
		}
	}
	var missing []string
	for _, f := range chartFlags(fullOverrides) {
		if !known[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		t.Skipf("ration run does not know %v yet: chart values using them (metrics.enabled, run.logFormat, run.stallTimeout, ...) would fail with exit 255", missing)
	}
}

// TestShardsAndParallelism: shards sets the indexes (completions and
// RATION_SHARD_COUNT), parallelism the pods at once, defaulting to shards
// and never above it.
func TestShardsAndParallelism(t *testing.T) {
	for _, c := range []struct {
		values            string
		completions, pods int32
	}{
		{"shards: 16", 16, 16},
		{"shards: 16\nparallelism: 4", 16, 4},
		{"shards: 16\nparallelism: null", 16, 16},
		{"shards: 4\nparallelism: 40", 4, 4},
	} {
		r := mustRender(t, c.values)
		checkJobInvariants(t, r.job)
		ptrEq(t, c.values+": completions", r.job.Spec.Completions, c.completions)
		ptrEq(t, c.values+": parallelism", r.job.Spec.Parallelism, c.pods)
	}
}
