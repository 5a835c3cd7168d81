package charts

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// kubeVar is Kubernetes' $(NAME) reference in a container's args, or its
// escape $$.
var kubeVar = regexp.MustCompile(`\$\$|\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)`)

// podCommand is what the kubelet starts for the ration container of pod
// index: the image's ENTRYPOINT (bin) with the container's args, $(NAME)
// expanded from the container's env plus the JOB_COMPLETION_INDEX the Job
// controller adds, in the container's workingDir. The chart under test
// mounts input and output at the test's own directories.
func podCommand(ctx context.Context, t *testing.T, bin string, c *corev1.Container, index int) *exec.Cmd {
	t.Helper()
	env := map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(index)}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = kubeVar.ReplaceAllStringFunc(a, func(m string) string {
			if m == "$$" {
				return "$"
			}
			if v, ok := env[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = c.WorkingDir
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// podDirs makes an input directory holding files and an output directory,
// and returns chart values that mount them.
func podDirs(t *testing.T, files ...string) (in, out, values string) {
	t.Helper()
	in, out = filepath.Join(t.TempDir(), "input"), filepath.Join(t.TempDir(), "output")
	for _, d := range []string{in, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(in, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return in, out, fmt.Sprintf("input: {mountPath: %q}\noutput: {mountPath: %q}\n", in, out)
}

// TestRetriedPodKeepsFailures: a shard's pod that is replaced after jobs
// of it failed (ration OOM-killed, the pod deleted: exit 137 or 143, which
// the podFailurePolicy counts and retries) must not turn the index into a
// success. The replacement resumes from the shard's joblog; if it skipped
// the failed jobs as done it would exit 0, the Job would count the index
// complete and the failed inputs would vanish from its status. It runs
// them again, so that it exits with the number that still fail, which
// FailIndex acts on.
func TestRetriedPodKeepsFailures(t *testing.T) {
	bin := buildRation(t)
	_, out, dirs := podDirs(t, "bad", "ok", "slow")
	gate := filepath.Join(t.TempDir(), "go")
	script := fmt.Sprintf(`case "$1" in bad) exit 3;; slow) while [ ! -e %q ]; do sleep 0.05; done;; esac`, gate)
	r := mustRender(t, dirs+fmt.Sprintf("termTimeoutSeconds: 0\nrun: {jobs: \"3\", command: [sh, -c, %q, sh]}\n", script))
	c := ration(t, &r.job.Spec.Template.Spec)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()

	// First pod: "bad" fails, "slow" runs until the pod is deleted.
	first := podCommand(ctx, t, bin, c, 0)
	var log1 strings.Builder
	first.Stderr = &log1
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	joblog := filepath.Join(out, "*.tsv")
	for {
		m, _ := filepath.Glob(joblog)
		if len(m) == 1 && slices.ContainsFunc(readJoblog(t, m[0]), func(e jobEntry) bool { return e.input == "bad" }) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no joblog record of the failed job in %s\n%s", out, log1.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := first.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(first.Wait()); code != 143 {
		t.Fatalf("deleted pod exited %d, want 143\n%s", code, log1.String())
	}

	// Its replacement: "slow" now succeeds; "bad" still fails.
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	second := podCommand(ctx, t, bin, c, 0)
	log2, err := second.CombinedOutput()
	if code := exitCode(err); code < 1 || code > 101 {
		t.Errorf("replacement pod exited %d, want 1..101 (FailIndex): a job of its shard failed\n%s", code, log2)
	}
}

// TestNewRunDoesNotResumeOldJoblogs: the next run is a new Job (a new
// runId, docs/kubernetes.md) on the same output claim, often with another
// command or file set. It must run its inputs, not skip every job whose
// sequence number an earlier run's joblog of the same index records. Only
// resumeFrom continues an earlier run, of the same command: the joblog of
// another command is refused.
func TestNewRunDoesNotResumeOldJoblogs(t *testing.T) {
	bin := buildRation(t)
	_, out, dirs := podDirs(t, "a", "b", "c")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()

	old := mustRender(t, dirs+"runId: \"1\"\nrun: {command: [\"true\"]}\n")
	if b, err := podCommand(ctx, t, bin, ration(t, &old.job.Spec.Template.Spec), 0).CombinedOutput(); err != nil {
		t.Fatalf("run 1: %v\n%s", err, b)
	}
	script := `touch "$RATION_OUTPUT_DIR/done-$1"`
	next := mustRender(t, dirs+fmt.Sprintf("runId: \"2\"\nrun: {command: [sh, -c, %q, sh]}\n", script))
	c := ration(t, &next.job.Spec.Template.Spec)
	if b, err := podCommand(ctx, t, bin, c, 0).CombinedOutput(); err != nil {
		t.Fatalf("run 2: %v\n%s", err, b)
	}
	for _, f := range []string{"a", "b", "c"} {
		if _, err := os.Stat(filepath.Join(out, "done-"+f)); err != nil {
			t.Errorf("run 2 did not run input %s: %v", f, err)
		}
		if err := os.Remove(filepath.Join(out, "done-"+f)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}

	// Run 3 continues run 2, which did every input with the same command.
	cont := mustRender(t, dirs+fmt.Sprintf("runId: \"3\"\nresumeFrom: 2\nrun: {command: [sh, -c, %q, sh]}\n", script))
	if b, err := podCommand(ctx, t, bin, ration(t, &cont.job.Spec.Template.Spec), 0).CombinedOutput(); err != nil {
		t.Fatalf("run 3: %v\n%s", err, b)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "done-*")); len(m) > 0 {
		t.Errorf("run 3 (resumeFrom: 2) ran %q, which run 2 had done", m)
	}
	// Run 4 continues run 1, whose joblogs are another command's: refused
	// with exit 255 (FailJob), nothing run. (Matched by number, it skipped
	// every job run 1 had recorded.)
	other := mustRender(t, dirs+fmt.Sprintf("runId: \"4\"\nresumeFrom: 1\nrun: {command: [sh, -c, %q, sh]}\n", script))
	b, err := podCommand(ctx, t, bin, ration(t, &other.job.Spec.Template.Spec), 0).CombinedOutput()
	if code := exitCode(err); code != 255 || !strings.Contains(string(b), "records another command") {
		t.Errorf("run 4 (resumeFrom: 1, another command): exit %d, want 255 refusing it\n%s", code, b)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "done-*")); len(m) > 0 {
		t.Errorf("run 4 ran %q", m)
	}
}
