package pool_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestImportsStandardLibraryOnly keeps pool embeddable at no cost: a
// service that links it must not link anything but the standard library
// (errgroup, conc and pond depend on nothing either). Sizing from the
// container's limits is package limits' job, one call away.
func TestImportsStandardLibraryOnly(t *testing.T) {
	// go test puts its own toolchain's bin first in PATH.
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the imports with")
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command(gotool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("GOOS=%s go list -deps: %v\n%s", goos, err, out)
		}
		var extra []string
		for _, p := range strings.Fields(string(out)) {
			if p != "github.com/ration-run/ration/pool" {
				extra = append(extra, p)
			}
		}
		if len(extra) > 0 {
			t.Errorf("GOOS=%s: pool imports %d packages outside the standard library: %s", goos, len(extra), strings.Join(extra, ", "))
		}
	}
}
