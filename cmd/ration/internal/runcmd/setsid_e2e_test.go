//go:build linux

package runcmd

import (
	"syscall"
	"testing"
)

// TestNoProcessOutlivesRation: processes that a worker or a job start in
// their own session (setsid), out of reach of the kill of their process
// group, are gone when ration exits: ration is a child subreaper, so they
// stay its descendants whatever their parents do, and it kills every
// descendant at the end of the run. A worker's were left running (12 with
// 3 tasks), as were a job's.
func TestNoProcessOutlivesRation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// dir in each command line marks the processes of this test.
	daemon := `setsid sh -c 'sleep 1000; : ` + dir + `' >/dev/null 2>&1 </dev/null &`
	w := writeWorker(t, dir, daemon+`
while read -r l; do
`+idOf+daemon+`
  printf '{"id":%s,"ok":true,"output":"x"}\n' "$id"
done
`)
	for _, args := range [][]string{
		{"run", "-j2", "--worker", w, ":::", "a", "b", "c"},
		{"run", "-j2", "--shell", daemon + " echo {}", ":::", "a", "b", "c"},
	} {
		r := rcmd{dir: dir, args: args}.run(t)
		left := procsWith(dir)
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if r.code != 0 || len(left) > 0 {
			t.Errorf("%q: exit %d, %d processes left running after ration exited: %v\n%s", args[1:], r.code, len(left), left, r.stderr)
		}
	}
}
