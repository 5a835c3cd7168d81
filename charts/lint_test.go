package charts

import (
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// TestHelmLint runs Helm's own chart linter, as `helm lint --strict
// --kube-version 1.33.0` would: any warning or error fails. The defaults
// (no run.command) lint clean too: the linter reports the chart's refusal
// as information, and the templates must still render around it.
func TestHelmLint(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	for _, values := range []map[string]any{
		nil,
		withCommand(nil),
		withCommand(map[string]any{"shards": int64(8), "metrics": map[string]any{"enabled": true}, "input": map[string]any{"existingClaim": "in"}}),
	} {
		l := lint.AllWithKubeVersion(chartDir, values, "work", kv)
		for _, m := range l.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("%v", m)
			} else {
				t.Logf("%v", m)
			}
		}
	}
}
