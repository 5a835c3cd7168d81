package testutil

import (
	"os"
	"path/filepath"
)

// PrebuiltEnv names the environment variable that points the tests at a
// directory of commands built beforehand, for running compiled test
// binaries (go test -c) on a machine without a Go toolchain, such as a
// cgroup v2 host reached through bench/scripts/v2host.sh. The commands
// are named after their package directory: ration, goworker.
const PrebuiltEnv = "RATION_TEST_PREBUILT"

// Prebuilt returns the path of the command name in the directory that
// $RATION_TEST_PREBUILT names, and whether the variable is set. When it
// is set, the tests use that command and never build one: a missing
// command fails them instead of running go.
func Prebuilt(name string) (string, bool) {
	dir := os.Getenv(PrebuiltEnv)
	if dir == "" {
		return "", false
	}
	return filepath.Join(dir, name), true
}
