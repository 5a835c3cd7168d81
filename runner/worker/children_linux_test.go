package worker

import (
	"bufio"
	"os/exec"
	"slices"
	"testing"

	"github.com/shirou/gopsutil/v4/process"
)

// TestChildrenOf: the kernel's child lists name the same children as
// gopsutil's scan of every process, and treeRSS counts them.
func TestChildrenOf(t *testing.T) {
	sh := exec.Command("sh", "-c", "sleep 60 & sleep 60 & echo started; wait")
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if kids, err := (&process.Process{Pid: int32(sh.Process.Pid)}).Children(); err == nil {
			for _, k := range kids {
				_ = k.Kill()
			}
		}
		_ = sh.Process.Kill()
		_ = sh.Wait()
	})
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	p := &process.Process{Pid: int32(sh.Process.Pid)}
	pids := func(ps []*process.Process, err error) []int32 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []int32
		for _, c := range ps {
			out = append(out, c.Pid)
		}
		slices.Sort(out)
		return out
	}
	got, want := pids(childrenOf(p)), pids(p.Children())
	if len(got) != 2 || !slices.Equal(got, want) {
		t.Errorf("childrenOf = %v, gopsutil's Children = %v; want the same 2 sleeps", got, want)
	}
	shOnly, err := p.MemoryInfo()
	if err != nil {
		t.Fatal(err)
	}
	if total, err := treeRSS(sh.Process.Pid); err != nil || total <= int64(shOnly.RSS) {
		t.Errorf("treeRSS = %d, %v; want more than the shell's own %d", total, err, shOnly.RSS)
	}
}
