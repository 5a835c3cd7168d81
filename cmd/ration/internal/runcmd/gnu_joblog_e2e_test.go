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

// joblogColumns returns the Send and Receive columns of every record of
// the joblog at path, "Send Receive", sorted.
func joblogColumns(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(l, "\t")
		if len(f) < 9 {
			t.Fatalf("joblog line %q", l)
		}
		cols = append(cols, f[4]+" "+f[5])
	}
	slices.Sort(cols)
	return cols
}

// TestJoblogSendReceive: the joblog's Send and Receive columns are GNU
// parallel 20221122's for local jobs (every want below is what GNU wrote,
// but the --line-buffer ones, see below): Send is the bytes of a --pipe
// job's block, its --header included (also with --cat and --fifo), 0
// without --pipe and with --pipepart; Receive is the bytes the job wrote
// to its stdout (-v's command line included, --tag's tags not; the size
// of the file with --files and --results), with --line-buffer its stdout
// and stderr, with -u 0. ration counted stdout and stderr, tags and file
// names included, and Send was always 0. GNU counts a --line-buffer job's
// unfinished last line twice (11 where ration writes 9, 15 for 13): ration
// counts every byte once.
func TestJoblogSendReceive(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	jl := filepath.Join(dir, "jl")
	in := filepath.Join(dir, "in")
	if err := os.WriteFile(in, []byte("1234567\n89\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := `printf 'abc\nd'; printf 'de\nf' >&2`
	pipe := `cat; printf de >&2`
	cat := `cat {}; printf de >&2`
	for _, c := range []struct {
		opts []string
		cmd  string
		want string
	}{
		{nil, out, "0 5"},
		{[]string{"-k"}, out, "0 5"},
		{[]string{"--tag"}, out, "0 5"},
		{[]string{"--tagstring", "xx"}, out, "0 5"},
		{[]string{"--compress"}, out, "0 5"},
		{[]string{"--files"}, out, "0 5"},
		{[]string{"--results", filepath.Join(dir, "res")}, out, "0 5"},
		{[]string{"--results", filepath.Join(dir, "r.csv")}, out, "0 5"},
		{[]string{"-v"}, out, "0 " + strconv.Itoa(5+len(out+" x\n"))},
		{[]string{"-t"}, out, "0 5"},
		{[]string{"--lb"}, out, "0 9"},
		{[]string{"--lb", "--tag"}, out, "0 9"},
		{[]string{"-u"}, out, "0 0"},
		{[]string{"--pipe"}, pipe, "11 11"},
		{[]string{"--pipe", "-k"}, pipe, "11 11"},
		{[]string{"--pipe", "--header", ":"}, pipe, "11 11"},
		{[]string{"--pipe", "--files"}, pipe, "11 11"},
		{[]string{"--pipe", "--lb"}, pipe, "11 13"},
		{[]string{"--pipe", "-u"}, pipe, "11 0"},
		{[]string{"--pipe", "--cat"}, cat, "11 11"},
		{[]string{"--pipe", "--fifo"}, cat, "11 11"},
		{[]string{"--pipepart", "-a", in, "--block", "100", "-j1"}, pipe, "0 11"},
		{[]string{"--pipepart", "-a", in, "--block", "100", "-j1", "--cat"}, cat, "0 11"},
		{[]string{"--pipepart", "-a", in, "--block", "100", "-j1", "--header", ":"}, pipe, "0 11"},
	} {
		os.Remove(jl)
		args := append([]string{"run", "--quiet", "--shell", "--joblog", jl}, c.opts...)
		args = append(args, c.cmd)
		stdin := "1234567\n89\n"
		if !slices.Contains(c.opts, "--pipe") && !slices.Contains(c.opts, "--pipepart") {
			args, stdin = append(args, ":::", "x"), ""
		}
		if _, stderr, code := rationCmd(t, stdin, nil, args...); code != 0 {
			t.Errorf("%q: exit %d: %s", c.opts, code, stderr)
			continue
		}
		if got := joblogColumns(t, jl); !slices.Equal(got, []string{c.want}) {
			t.Errorf("%q: Send Receive %q, want %q (GNU parallel's)", c.opts, got, c.want)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "r.csv"))
	if err != nil || !strings.Contains(string(b), ",0,5,0,0,") {
		t.Errorf("--results r.csv: Send and Receive are not 0 and 5 (%v):\n%s", err, b)
	}
}

// TestJoblogSendRoundRobin: with --round-robin a job's Send is the bytes
// of every block it took, as GNU parallel counts them, so the jobs' Sends
// add up to the input's size, and each job's is what wc -c counted.
func TestJoblogSendRoundRobin(t *testing.T) {
	jl := filepath.Join(t.TempDir(), "jl")
	in := seqInput(30000)
	stdout, stderr, code := rationCmd(t, in, nil, "run", "--quiet", "-j2", "--pipe", "--round-robin", "--block", "10k", "--joblog", jl, "wc", "-c")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var want, got []string
	total := 0
	for _, f := range strings.Fields(stdout) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%q: %v", stdout, err)
		}
		total += n
		want = append(want, f+" "+strconv.Itoa(len(f)+1))
	}
	slices.Sort(want)
	got = joblogColumns(t, jl)
	if total != len(in) || !slices.Equal(got, want) {
		t.Errorf("Send Receive %q, want %q (the jobs counted %d bytes of %d)", got, want, total, len(in))
	}
}
