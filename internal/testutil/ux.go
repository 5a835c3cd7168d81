package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// BuildRation builds the ration command into dir and returns the binary's
// path. End-to-end tests call it once, from TestMain or from the one test
// that needs the binary, so that every run of the binary is a real
// process with its own terminal, signals and exit status.
func BuildRation(dir string) (string, error) {
	if p, ok := Prebuilt("ration"); ok {
		_, err := os.Stat(p)
		return p, err
	}
	bin := filepath.Join(dir, "ration")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	// The module's root is where go.mod lives; `go list` finds it from
	// whatever package directory the test runs in.
	goCmd := GoTool()
	root, err := exec.Command(goCmd, "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("find module root: %w", err)
	}
	cmd := exec.Command(goCmd, "build", "-o", bin, "./cmd/ration")
	cmd.Dir = strings.TrimSpace(string(root))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/ration: %w\n%s", err, out)
	}
	return bin, nil
}
