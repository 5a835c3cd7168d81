package charts

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
)

// policyAction is what the Job controller does with a ration container
// that exited with code, by the rendered podFailurePolicy: the action of
// the first rule whose onExitCodes matches, "Count" when none does (the
// failure counts against backoffLimitPerIndex and the pod is replaced),
// "Succeeded" for 0.
func policyAction(p *batchv1.PodFailurePolicy, code int) string {
	if code == 0 {
		return "Succeeded"
	}
	for _, r := range p.Rules {
		e := r.OnExitCodes
		if e == nil || (e.ContainerName != nil && *e.ContainerName != "ration") {
			continue
		}
		in := slices.Contains(e.Values, int32(code))
		if (e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) == in {
			return string(r.Action)
		}
	}
	return "Count"
}

// TestExitStatusesMatchPodFailurePolicy runs the pod's command (the chart's
// args, the real binary) on one input whose job fails in several ways,
// with and without run.halt, and checks the Job controller's reading of
// the exit status: failed jobs fail only their index (FailIndex, 1..101),
// a usage error fails the Job (FailJob, 255). With run.halt "now,fail=1"
// ration exited with the failing job's own status, as GNU parallel does: a
// job exiting 255 failed the whole Job, and one killed by a signal (137) or
// exiting 200 matched no rule, so the pod was retried and the job run
// again. The chart now passes --exit-count, which keeps ration's status
// the number of failed jobs whatever --halt says.
func TestExitStatusesMatchPodFailurePolicy(t *testing.T) {
	bin := buildRation(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	for _, c := range []struct {
		name, halt, script, extra string
		want                      string
	}{
		{"job exits 255", "", "exit 255", "", "FailIndex"},
		{"halt, job exits 255", "now,fail=1", "exit 255", "", "FailIndex"},
		{"halt, job killed", "now,fail=1", "kill -KILL $$$$", "", "FailIndex"}, // Kubernetes makes $$ of $$$$
		{"halt soon, job exits 200", "soon,fail=1", "exit 200", "", "FailIndex"},
		{"halt 100%, job exits 150", "now,fail=100%", "exit 150", "", "FailIndex"},
		{"halt, job succeeds", "now,fail=1", "exit 0", "", "Succeeded"},
		{"usage error", "now,fail=1", "exit 0", `"--no-such-flag"`, "FailJob"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, dirs := podDirs(t, "a")
			r := mustRender(t, dirs+fmt.Sprintf("run: {halt: %q, command: [sh, -c, %q, sh], extraArgs: [%s]}\n", c.halt, c.script, c.extra))
			cmd := podCommand(ctx, t, bin, ration(t, &r.job.Spec.Template.Spec), 0)
			out, err := cmd.CombinedOutput()
			code := exitCode(err)
			if got := policyAction(r.job.Spec.PodFailurePolicy, code); got != c.want {
				t.Errorf("ration exited %d: the Job controller would %s, want %s\n%s", code, got, c.want, out)
			}
		})
	}
}
