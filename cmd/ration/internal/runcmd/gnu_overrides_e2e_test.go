//go:build unix

package runcmd

import (
	"os/exec"
	"strings"
	"testing"
)

// gnuOverrideCase is a bash script running `parallel` with GNU parallel's
// options that gnuOverrideFlags adds, and what GNU parallel 20221122 prints for
// it on stdout (recorded; the directory the script runs in is $W) and
// exits with.
type gnuOverrideCase struct {
	name, script, want string
	code               int
}

// gnuOverrideCases are the scripts of TestGNUOverrideOptions.
var gnuOverrideCases = []gnuOverrideCase{
	// Other spellings of options ration takes.
	{name: "halt-on-error", script: `parallel -k -j1 --halt-on-error now,fail=1 'echo {}; exit {}' ::: 0 3 0`, want: "0\n3\n", code: 3},
	{name: "outputasfiles", script: `parallel -k --outputasfiles echo ::: a b > names; xargs cat < names; xargs rm < names`, want: "a\nb\n"},
	{name: "output-as-files", script: `parallel -k --output-as-files echo ::: c > names; xargs cat < names; xargs rm < names`, want: "c\n"},
	{name: "min-version", script: `parallel --min-version 20200101`, want: "20221122\n"},
	// --silent: the default; it cancels -v wherever it is.
	{name: "silent-after-v", script: `parallel -v --silent echo ::: a`, want: "a\n"},
	{name: "silent-before-v", script: `parallel -k --silent -v echo ::: a b`, want: "a\nb\n"},
	// --plain: no profile and no $PARALLEL.
	{name: "plain-env", script: `PARALLEL=--tag parallel --plain echo ::: a`, want: "a\n"},
	{name: "no-plain-env", script: `PARALLEL=--tag parallel echo ::: a`, want: "a\ta\n"},
	{name: "plain-profile", script: `printf -- '--tag\n' > prof; parallel --plain -J ./prof echo ::: a`, want: "a\n"},
	{name: "plain-missing-profile", script: `parallel --plain -J ./none echo ::: a`, want: "a\n"},
	// --no-keep-order cancels -k, even a later one: the job that ends
	// first (after 0 s, not 1.5 s) prints first.
	{name: "nok", script: `parallel -j2 --nok -k 'sleep {}; echo {}' ::: 1.5 0`, want: "0\n1.5\n"},
	{name: "gnu", script: `parallel --gnu echo ::: a`, want: "a\n"},
	// The slot less one: in $PARALLEL_JOBSLOT0, or the variable named.
	{name: "slot0", script: `parallel -j1 'echo {} $PARALLEL_JOBSLOT0' ::: a b`, want: "a 0\nb 0\n"},
	{name: "process-slot-var", script: `name=x parallel -j1 --process-slot-var=name 'echo {} $name $PARALLEL_JOBSLOT0' ::: a b`, want: "a 0\nb 0\n"},
	// --workdir: every job runs in DIR, made first; one per job with
	// replacement strings; . is the current directory.
	{name: "workdir", script: `parallel -k --wd sub/dir 'pwd; ls ..; echo {}' ::: a b`, want: "$W/sub/dir\ndir\na\n$W/sub/dir\ndir\nb\n"},
	{name: "workdir-per-job", script: `parallel -k --workdir 'o/{}' 'pwd' ::: a b; ls o`, want: "$W/o/a\n$W/o/b\na\nb\n"},
	{name: "workdir-abs", script: `mkdir -p x/y && parallel -k --work-dir "$PWD/x" 'ls; pwd' ::: a`, want: "y\n$W/x\n"},
	{name: "workdir-dot", script: `parallel --wd . pwd ::: a`, want: "$W\n"},
	// --skip-first-line: the first source's first value is left out,
	// before -E, --header and the rest read it; with --pipe, stdin's first
	// line.
	{name: "skip-stdin", script: `printf 'h\na\nb\n' | parallel -k --skip-first-line echo`, want: "a\nb\n"},
	{name: "skip-pipe", script: `printf 'h\na\nb\n' | parallel -k --pipe --skip-first-line cat`, want: "a\nb\n"},
	{name: "skip-round-robin", script: `printf 'h\na\nb\n' | parallel -k --pipe --round-robin -j1 --skip-first-line cat`, want: "a\nb\n"},
	{name: "skip-cat", script: `printf 'h\na\nb\n' | parallel -k --pipe --cat --skip-first-line cat {}`, want: "a\nb\n"},
	{name: "skip-file", script: `printf 'h\na\nb\n' > f3; parallel -k --skipfirstline echo :::: f3`, want: "a\nb\n"},
	{name: "skip-args", script: `parallel -k --skip-first-line echo ::: x y ::: 1 2`, want: "y 1\ny 2\n"},
	{name: "skip-a-first", script: `printf 'h\na\nb\n' > f3; parallel -k --skip-first-line -a f3 echo ::: q`, want: "a q\nb q\n"},
	{name: "skip-stdin-source", script: `printf 'h\na\nb\n' | parallel -k --skip-first-line echo :::: - ::: x`, want: "a x\nb x\n"},
	{name: "skip-null", script: `printf 'h\0a\0b\0' | parallel -0 -k --skip-first-line echo`, want: "a\nb\n"},
	{name: "skip-delimiter", script: `printf 'h__a__b' | parallel -d __ -k --skip-first-line echo`, want: "a\nb\n"},
	{name: "skip-header", script: `printf 'junk\nname\nv1\n' | parallel --header : --skip-first-line echo {name}`, want: "v1\n"},
	{name: "skip-eof", script: `printf 'h\nEOF\na\n' | parallel -k -E h --skip-first-line echo`, want: "EOF\na\n"},
	{name: "skip-only", script: `printf 'h\n' | parallel --skip-first-line echo`, want: ""},
	{name: "processslotvar", script: `parallel -j1 --processslotvar s 'echo {} $s' ::: a`, want: "a 0\n"},
}

// TestGNUOverrideOptions runs gnuOverrideCases through ration (the shim of
// TestGNUExamples: ration run --shell as `parallel`) and compares stdout
// and exit status with GNU parallel's, recorded, and with -gnu also with
// GNU parallel's of the moment.
func TestGNUOverrideOptions(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	if _, err := exec.LookPath("parallel"); *gnuLive && err != nil {
		t.Skip("GNU parallel is not installed")
	}
	e := newExampleEnv(t)
	for _, c := range gnuOverrideCases {
		t.Run(c.name, func(t *testing.T) {
			if *gnuLive {
				if out, code := e.run(t, c.script, true); out != c.want || code != c.code {
					t.Errorf("GNU parallel now: exit %d, stdout %q; recorded: exit %d, %q", code, out, c.code, c.want)
				}
			}
			if out, code := e.run(t, c.script, false); out != c.want || code != c.code {
				t.Errorf("%s\nration: exit %d, stdout %q\nGNU parallel: exit %d, stdout %q", c.script, code, out, c.code, c.want)
			}
		})
	}
}

// TestGNUTotalJobs: --total-jobs N (--total, --totaljobs) is the total
// the progress bar counts to, where the input is read as it comes (stdin,
// --pipe) and where it is known (:::), as GNU parallel's --eta and --bar.
func TestGNUTotalJobs(t *testing.T) {
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"1\n2\n3\n", []string{"--total-jobs", "6", "echo"}, "] 3/6  50%,"},
		{"1\n2\n3\n", []string{"--total=4", "--pipe", "--block", "1", "cat"}, "] 3/4  75%,"},
		{"", []string{"--totaljobs", "8", "echo", ":::", "a", "b"}, "] 2/8  25%,"},
		{"1\n2\n3\n", []string{"echo"}, "ration: 3 done, 0 failed, 0 running,"},
	} {
		_, stderr, code := rationCmd(t, c.stdin, nil, append([]string{"run", "--bar"}, c.args...)...)
		if code != 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant a bar line with %q", c.args, code, stderr, c.want)
		}
	}
}
