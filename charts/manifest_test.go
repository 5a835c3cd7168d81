package charts

import (
	"slices"
	"strings"
	"testing"
)

// TestRenderManifestGenerate: manifest.generate renders a pre-install and
// pre-upgrade hook Job that lists run.files once into the output volume
// (keeping an existing manifest), and the shards read their byte range of
// it (--manifest) instead of walking run.files.
func TestRenderManifestGenerate(t *testing.T) {
	r := mustRender(t, `
runId: r7
shards: 20
input: {existingClaim: files}
output: {existingClaim: results}
run: {files: ["**/*.txt"], exclude: [tmp]}
manifest: {generate: true}
`)
	checkJobInvariants(t, r.job)
	args := ration(t, &r.job.Spec.Template.Spec).Args
	if !slices.Contains(args, "--manifest=/output/manifest-r7.txt") ||
		slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--files") || strings.HasPrefix(a, "--exclude") }) {
		t.Errorf("shard args %q: want --manifest=/output/manifest-r7.txt and no walk", args)
	}
	m := r.manifestJob
	if m == nil {
		t.Fatal("no manifest hook Job")
	}
	eq(t, "hook", m.Annotations["helm.sh/hook"], "pre-install,pre-upgrade")
	pod := &m.Spec.Template.Spec
	checkRestricted(t, pod)
	c := pod.Containers[0]
	want := []string{"manifest", "--files=**/*.txt", "--exclude=tmp", "--keep-existing", "--output=/output/manifest-r7.txt"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("manifest args %q, want %q", c.Args, want)
	}
	eq(t, "workingDir", c.WorkingDir, "/input")
	for _, path := range []string{"/input", "/output", "/tmp"} {
		if _, ok := mountAt(&c, path); !ok {
			t.Errorf("manifest container has no %s mount", path)
		}
	}
}

// TestRenderManifestPath: manifest.path names a manifest the user wrote;
// the shards read it, and no hook Job is rendered.
func TestRenderManifestPath(t *testing.T) {
	r := mustRender(t, `manifest: {path: lists/all.txt}`)
	checkJobInvariants(t, r.job)
	args := ration(t, &r.job.Spec.Template.Spec).Args
	if !slices.Contains(args, "--manifest=lists/all.txt") || slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--files") }) {
		t.Errorf("args %q: want --manifest=lists/all.txt and no --files", args)
	}
	if r.manifestJob != nil {
		t.Error("a hook Job for a manifest the user gave")
	}
}
