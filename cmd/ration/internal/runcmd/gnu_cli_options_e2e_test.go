//go:build unix

package runcmd

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestJobsFileResizesRun: with -j FILE, a job that changes the file
// changes how many jobs run at once from the next job end on, as GNU
// parallel re-reads the file; without a change the value stays.
func TestJobsFileResizesRun(t *testing.T) {
	for _, c := range []struct {
		name, newValue string
		wantMax        int // the most jobs seen running at once, at least
	}{
		{"changed", "3", 2},
		{"unchanged", "1", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			jobs, running := filepath.Join(dir, "jobs"), filepath.Join(dir, "running")
			if err := os.WriteFile(jobs, []byte("1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(running, 0o755); err != nil {
				t.Fatal(err)
			}
			// Job 1 writes the file (unchanged: touches nothing); every job
			// prints how many jobs are running as it starts.
			write := ""
			if c.newValue != "1" {
				write = "echo " + c.newValue + " > " + jobs + ";"
			}
			script := "touch " + running + "/{}; ls " + running + " | wc -l; if [ {} = 1 ]; then " + write + " :; fi; sleep 0.4; rm " + running + "/{}"
			out, errOut, code := rationCmd(t, "", nil, "run", "--quiet", "--shell", "-j", jobs, script, ":::", "1", "2", "3", "4")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var counts []int
			for _, l := range strings.Fields(out) {
				n, err := strconv.Atoi(l)
				if err != nil {
					t.Fatalf("output %q", out)
				}
				counts = append(counts, n)
			}
			if len(counts) != 4 {
				t.Fatalf("output %q, want 4 counts", out)
			}
			m := slices.Max(counts)
			if c.wantMax == 1 && m != 1 || m < c.wantMax {
				t.Errorf("at most %d jobs ran at once (%v), want %d", m, counts, c.wantMax)
			}
		})
	}
}

// TestRunGNUInfo: the options that print and exit, through the binary.
func TestRunGNUInfo(t *testing.T) {
	out, _, code := rationCmd(t, "", nil, "run", "--version")
	if code != 0 || !strings.Contains(out, "GNU parallel compatibility level 20221122") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	for v, want := range map[string]int{"20130722": 0, "20221122": 0, "20221123": 255} {
		out, _, code := rationCmd(t, "", nil, "run", "--minversion", v)
		if code != want || out != "20221122\n" {
			t.Errorf("--minversion %s: exit %d, %q; want %d and 20221122", v, code, out, want)
		}
	}
	out, _, code = rationCmd(t, "", nil, "run", "--max-line-length-allowed")
	if code != 0 || out != "130329\n" {
		t.Errorf("--max-line-length-allowed: exit %d, %q", code, out)
	}
	out, _, code = rationCmd(t, "a b\nit's\n", nil, "run", "--shellquote")
	if code != 0 || out != "'a b'\n'it'\"'\"'s'\n" {
		t.Errorf("--shellquote: exit %d, %q", code, out)
	}
}

// TestRunGNUDryRunTag: --dry-run prints each command after its --tag or
// --tagstring, and --shellquote quotes the command, not the tag, as GNU
// parallel 20221122 prints them.
func TestRunGNUDryRunTag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dry-run", "--tag", "-k", "echo", ":::", "a", "b c"}, "a\techo a\nb c\techo 'b c'\n"},
		{[]string{"--dry-run", "--tagstring", "<{#}>", "-k", "echo", ":::", "a", "b"}, "<1>\techo a\n<2>\techo b\n"},
		{[]string{"--shellquote", "--tag", "echo", ":::", "a b"}, "a b\t'echo '\"'\"'a b'\"'\"\n"},
	} {
		out, stderr, code := rationCmd(t, "", nil, append([]string{"run", "-q"}, c.args...)...)
		if code != 0 || out != c.want {
			t.Errorf("ration run %q: exit %d, %q (stderr %q); want %q", c.args, code, out, stderr, c.want)
		}
	}
}

// TestRunGNUJoblogPlus: --joblog +FILE appends to FILE, as GNU parallel's
// man page says; ration used to write a new file named +FILE.
func TestRunGNUJoblogPlus(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	for _, in := range []string{"a", "b"} {
		if _, stderr, code := rationCmd(t, "", nil, "run", "-q", "--joblog", "+"+log, "echo", ":::", in); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\techo "); n != 2 || strings.Count(string(data), "Seq\t") != 1 {
		t.Errorf("%s after two runs:\n%s\nwant one header and two records", log, data)
	}
	if _, err := os.Stat(filepath.Join(dir, "+log")); err == nil {
		t.Error("a file named +log was made")
	}
}

// TestRunGNURetriesZero: --retries 0 retries a failing job until it
// succeeds, as GNU parallel's man page says ("n=0 means infinite"); it
// used to run it once.
func TestRunGNURetriesZero(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	script := `n=$(cat ` + count + ` 2>/dev/null || echo 0); echo $((n+1)) > ` + count + `; [ $n -ge 3 ] && echo {}`
	_, stderr, code := rationCmd(t, "", nil, "run", "-q", "--retries", "0", "--shell", script, ":::", "a")
	data, _ := os.ReadFile(count)
	if code != 0 || strings.TrimSpace(string(data)) != "4" {
		t.Errorf("exit %d after %q attempts (stderr %q); want exit 0 after 4", code, strings.TrimSpace(string(data)), stderr)
	}
}
