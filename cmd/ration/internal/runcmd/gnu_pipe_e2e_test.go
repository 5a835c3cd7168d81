//go:build unix

package runcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rationPipe runs `ration run --quiet ARGS` with stdin (rationCmd).
func rationPipe(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return rationCmd(t, stdin, nil, append([]string{"run", "--quiet"}, args...)...)
}

// TestPipePartE2E: --pipepart gives each part of the file to a job, the
// header in front of each, and refuses what it cannot seek in.
func TestPipePartE2E(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("h\n1\n2\n3\n4\n5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := rationPipe(t, "", "-k", "--pipepart", "-a", file, "--header", ":", "--block", "3", "--shell", "tr '\\n' ' '; echo")
	if want := "h 1 2 \nh 3 4 \nh 5 \n"; out != want || code != 0 {
		t.Errorf("got %q, exit %d (%s), want %q", out, code, errs, want)
	}
	_, errs, code = rationPipe(t, "", "--pipepart", "-a", "/dev/null", "wc")
	if code == 0 || !strings.Contains(errs, "--pipepart: /dev/null: not a regular file") {
		t.Errorf("a device: exit %d, %s", code, errs)
	}
	_, errs, code = rationPipe(t, "", "--pipepart", "-a", filepath.Join(dir, "none"), "wc")
	if code == 0 || !strings.Contains(errs, "--pipepart: ") || !strings.Contains(errs, "none") {
		t.Errorf("no file: exit %d, %s", code, errs)
	}
}

// TestRoundRobinE2E: --round-robin runs at most -j jobs that share every
// line of the input; one that ends early is replaced; --halt stops a run
// whose jobs wait for blocks.
func TestRoundRobinE2E(t *testing.T) {
	in := seqInput(100000)
	out, errs, code := rationPipe(t, in, "-j3", "--pipe", "--round-robin", "--block", "10k", "--shell", "echo job; wc -l")
	lines := strings.Fields(out)
	jobs, sum := 0, 0
	for _, f := range lines {
		if f == "job" {
			jobs++
			continue
		}
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		sum += n
	}
	if code != 0 || jobs < 1 || jobs > 3 || sum != 100000 {
		t.Errorf("%d jobs counted %d lines (exit %d, %s), want 1 to 3 jobs and 100000 lines:\n%s", jobs, sum, code, errs, out)
	}
	// Each job reads one line and ends: new jobs take the blocks left.
	out, errs, code = rationPipe(t, in, "-j2", "--pipe", "--round-robin", "--block", "100k", "--shell", "head -1")
	if code != 0 || len(strings.Fields(out)) < 2 {
		t.Errorf("jobs that end early: exit %d (%s), output %q", code, errs, out)
	}
	_, _, code = rationPipe(t, in, "-j1", "--pipe", "--round-robin", "--block", "1k", "--halt", "now,fail=1", "--shell", "head -1 >/dev/null; exit 3")
	if code != 3 {
		t.Errorf("--halt now,fail=1: exit %d, want 3", code)
	}
}

// TestPipeCatFifoE2E: --cat and --fifo give each job its block in a file
// named by {}, removed when the job ends, also when the job never opens
// the FIFO.
func TestPipeCatFifoE2E(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, mode := range []string{"--cat", "--fifo"} {
		out, errs, code := rationPipe(t, "1\n2\n3\n4\n", "-k", "-N2", mode, "--shell", "wc -l < {}; echo stdin: $(cat)")
		if want := "2\nstdin:\n2\nstdin:\n"; out != want || code != 0 {
			t.Errorf("%s: got %q, exit %d (%s), want %q", mode, out, code, errs, want)
		}
	}
	_, errs, code := rationPipe(t, "1\n2\n", "-N1", "--fifo", "--shell", "true")
	if code != 0 {
		t.Errorf("a FIFO never opened: exit %d (%s)", code, errs)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestPipeFilesShard: with --cat and --fifo a block belongs to the shard
// its content hashes to, as without them (--pipe's blocks), so the shards
// of a run are disjoint and cover the input in every process. The shard
// hashed the name of the block's file, made from ration's process id, so
// each run split the blocks differently (shards of 482 + 482 lines of
// 1000). Also --pipepart's parts with --cat, by their byte ranges.
func TestPipeFilesShard(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	in := seqInput(1000)
	file := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	sorted := func(s string) string {
		l := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		slices.Sort(l)
		return strings.Join(l, "\n")
	}
	for i := range 3 {
		shard := fmt.Sprintf("%d/3", i)
		want, errs, code := rationPipe(t, in, "--pipe", "--block", "100", "--shard", shard, "cat")
		if code != 0 {
			t.Fatalf("--pipe --shard %s: exit %d (%s)", shard, code, errs)
		}
		for _, mode := range []string{"--cat", "--fifo"} {
			for range 2 { // two processes, two process ids
				out, errs, code := rationPipe(t, in, "--pipe", mode, "--block", "100", "--shard", shard, "cat", "{}")
				if code != 0 || sorted(out) != sorted(want) {
					t.Errorf("%s --shard %s: exit %d (%s): %d lines, want the %d of --pipe's shard",
						mode, shard, code, errs, strings.Count(out, "\n"), strings.Count(want, "\n"))
				}
			}
		}
		want, _, _ = rationPipe(t, "", "--pipepart", "-a", file, "--block", "100", "--shard", shard, "cat")
		for range 2 {
			out, errs, code := rationPipe(t, "", "--pipepart", "--cat", "-a", file, "--block", "100", "--shard", shard, "cat", "{}")
			if code != 0 || sorted(out) != sorted(want) {
				t.Errorf("--pipepart --cat --shard %s: exit %d (%s): %d lines, want the %d of --pipepart's shard",
					shard, code, errs, strings.Count(out, "\n"), strings.Count(want, "\n"))
			}
		}
	}
}

// TestPipeRecSepEscapes: without --regexp, --recend and --recstart decode
// \n, \r, \t, \0, \\, \' and \" as GNU parallel does (the man page's
// --recend '\n'); ration took them as literal backslashes, so no record
// ended and the whole input went to one job. Want: GNU parallel
// 20221122's output.
func TestPipeRecSepEscapes(t *testing.T) {
	for _, c := range []struct {
		in   string
		args []string
		want string
	}{
		{"a\r\nb\r\nc\r\n", []string{"--recend", `\r\n`, "tr '\\r\\n' RN; echo"}, "aRN\nbRN\ncRN\n"},
		{"x\ty\tz", []string{"--recend", `\t`, "tr '\\t' T; echo"}, "xT\nyT\nz\n"},
		{">a\n1\n>b\n2\n", []string{"--recstart", ">", "--recend", `\n`, "tr '\\n' N; echo"}, ">aN1N\n>bN2N\n"},
		{"a\x00b\x00", []string{"--recend", `\0`, "tr '\\0' Z; echo"}, "aZ\nbZ\n"},
		{`a\b\c`, []string{"--recend", `\\`, "echo; cat"}, "\na\\\nb\\\nc"},
	} {
		args := append([]string{"-k", "--pipe", "-N1", "--shell"}, c.args...)
		out, errs, code := rationPipe(t, c.in, args...)
		if out != c.want || code != 0 {
			t.Errorf("%q %q: got %q, exit %d (%s), want %q", c.in, c.args, out, code, errs, c.want)
		}
	}
}

// TestPipeHugeBlock: a --block far larger than the input (1T, which GNU
// parallel takes, capped at 2G-1) gives the whole input to one job;
// ration allocated the whole block before reading and died with "fatal
// error: runtime: out of memory".
func TestPipeHugeBlock(t *testing.T) {
	for _, b := range []string{"1T", "1t", "100g"} {
		out, errs, code := rationPipe(t, "1\n2\n3\n", "--pipe", "--block", b, "wc", "-l")
		if strings.TrimSpace(out) != "3" || code != 0 {
			t.Errorf("--block %s: got %q, exit %d (%.300s), want 3", b, out, code, errs)
		}
	}
}

// TestPipeRRSEmptyBlock: a block that --rrs leaves empty starts no
// command but keeps its job number, as GNU parallel's EOF detector does;
// ration ran the command with empty stdin. Want: GNU parallel 20221122's
// output.
func TestPipeRRSEmptyBlock(t *testing.T) {
	for _, c := range []struct {
		in   string
		args []string
		want string
	}{
		{"a\n\n\n\nb\n", []string{"-N1"}, "1\na\n3\nb\n"},
		{"a,,,b,", []string{"--recend", ",", "-N1"}, "1\na\n3\nb\n"},
	} {
		args := append([]string{"-k", "--pipe", "--rrs", "--shell"}, c.args...)
		out, errs, code := rationPipe(t, c.in, append(args, "echo {#}; cat; echo")...)
		if out != c.want || code != 0 {
			t.Errorf("%q %q: got %q, exit %d (%s), want %q", c.in, c.args, out, code, errs, c.want)
		}
	}
}
