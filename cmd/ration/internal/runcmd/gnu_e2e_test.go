//go:build unix

package runcmd

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gnuExample is one example of parallel_tutorial(7) or
// parallel_examples(7) as testdata/gnu_examples.txt holds it: where it is
// ("tutorial:130", the line of its block in the man page as `man | col
// -b` prints it), whether the test runs it ("run"), runs it with its data
// shrunk or made and its result listed ("adapted HOW", the script being
// the man page's with that change), runs it but lets it
// differ because the result depends on which of two jobs started together
// ends first ("timing REASON"), or why not ("skip REASON"), and its shell
// script.
type gnuExample struct {
	where, status, script string
}

// readGNUExamples reads testdata/gnu_examples.txt: blocks that start with
// "=== WHERE STATUS".
func readGNUExamples(t *testing.T) []gnuExample {
	t.Helper()
	data, err := os.ReadFile("testdata/gnu_examples.txt")
	if err != nil {
		t.Fatal(err)
	}
	var exs []gnuExample
	for _, chunk := range strings.Split(string(data), "=== ")[1:] {
		head, body, _ := strings.Cut(chunk, "\n")
		where, status, _ := strings.Cut(head, " ")
		exs = append(exs, gnuExample{where: where, status: status, script: body})
	}
	return exs
}

// gnuFixtures are the files the tutorial's prerequisites make, and a few
// more the examples name, in every example's working directory.
func gnuFixtures() map[string]string {
	num := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "%d\n", i)
		}
		return b.String()
	}
	return map[string]string{
		"abc-file":      "A\nB\nC\n",
		"def-file":      "D\nE\nF\n",
		"abc0-file":     "A\x00B\x00C\x00",
		"abc_-file":     "A_B_C_",
		"tsv-file.tsv":  "f1\tf2\nA\tB\nC\tD\n",
		"num8":          num(8),
		"num128":        num(128),
		"num30000":      num(30000),
		"num_%header":   "%head1\n%head2\n" + num(10),
		"fixedlen":      "HHHHAAABBBCCC",
		"a.html":        "<p>FOO BAR</p>\n",
		"b.html":        "<p>b</p>\n",
		"x.log":         "x\n",
		"y.log":         "y\n",
		"foo.es.txt":    "es\n",
		"destdir/.keep": "",
	}
}

// gnuDataFixtures are the data files some examples of
// parallel_examples(7) name: each is written only into the directory of
// an example whose script names it, so that the directory listings the
// other examples print stay as recorded.
func gnuDataFixtures() map[string]string {
	return map[string]string{
		"input_file":      "echo one\necho two\n",
		"file_list":       "abc-file\nno-such-file\ndef-file\n",
		"list":            "abc-file\ndef-file\n",
		"xlist":           "x1\nx2\n",
		"ylist":           "y1\ny2\n",
		"urlfile":         "https://example.invalid/a\nhttps://example.invalid/b\n",
		"hosts.txt":       "a.example\nb.example\nc.example\n",
		"textfile":        "line 1\nline 2\nline 3\n",
		"in.txt":          "a\nb\nc\nd\n",
		"addressbook.tsv": "Name\tE-mail address\nAnn\tann@example.com\nBob\tbob@example.com\n",
		"table_file.tsv":  "in1\tout1\n in2 \t out2 \n",
	}
}

// gnuFakes stand in, first on PATH on both sides, for the programs the
// examples run that are not installed or need the network. Each one's
// output (or the file it writes) is a function of its arguments, so the
// comparison still checks what each job was given; what the real program
// would do with them is not what the examples are about.
func gnuFakes() map[string]string {
	return map[string]string{
		// lame IN -o OUT
		"lame": "#!/bin/sh\nprintf 'mp3 of %s\\n' \"$1\" >\"$3\"\n",
		// convert [OPTIONS] IN OUT (shadows a stand-in that only writes PPM)
		"convert": "#!/bin/bash\nprintf 'converted %s: %s\\n' \"${@: -2:1}\" \"${*:1:$#-2}\" >\"${@: -1}\"\n",
		// Offline, wget fails to resolve the host.
		"wget":           "#!/bin/sh\necho \"wget: unable to resolve host address\" >&2\nexit 4\n",
		"host":           "#!/bin/sh\ncase $1 in b.*) a=1.2.3.4 ;; *) a=5.6.7.8 ;; esac\necho \"$1 has address $a\"\n",
		"my_program":     "#!/bin/sh\n[ \"$1\" = arg1 ]\n",
		"do_something":   "#!/bin/sh\necho \"did $*\"\n",
		"do_step1":       "#!/bin/sh\necho \"step1 $*\"\n",
		"do_step2":       "#!/bin/sh\necho \"step2 $*: $(cat)\"\n",
		"process_output": "#!/bin/sh\nsed 's/^/processed: /'\n",
		"cmd":            "#!/bin/sh\necho \"cmd $*\"\n",
		"my_command":     "#!/bin/sh\necho \"my_command $*\"\n",
	}
}

// gnuShim is the `parallel` the ration side of the test puts first on
// PATH (bash, so that exported bash functions reach it): ration run with
// GNU parallel's defaults, that is, every command
// through the shell (--shell), except with -q, whose meaning (the
// command's words reach the program as they are) is ration's own default.
const gnuShim = `#!/bin/bash
shell=--shell
for a in "$@"; do
	case $a in
	# GNU parallel's semaphore mode is ration sem.
	--semaphore|--fg|--bg|--wait|--id|--semaphorename|--semaphoretimeout|--st) exec "$RATION_BIN" sem "$@" ;;
	-q|-q0) shell= ;;
	-*) ;;
	*) break ;;
	esac
done
args=
for a in "$@"; do
	case $a in
	-q0) set -- "$@" -0 ;;
	-q) ;;
	*) set -- "$@" "$a" ;;
	esac
	shift
done
# Not exec: this bash stays ration's parent, the shell that --shell finds
# (GNU parallel's rule), however the test itself was started (a script's
# last command is exec'ed by bash -c, and make runs recipes with sh).
"$RATION_BIN" run --quiet $shell "$@"
exit $?
`

// semShim is the `sem` of the ration side: ration sem, GNU parallel's
// sem.
const semShim = `#!/bin/sh
exec "$RATION_BIN" sem "$@"
`

// exampleEnv is what every example runs with: a home whose .parallel
// holds GNU parallel's will-cite file and its cache (shared, so GNU
// parallel probes the system once), and the shim directory.
type exampleEnv struct {
	shim, fakes, ration string
	// num1000000 is the tutorial's seq 1000000 > num1000000, made once
	// and written only for the examples that name it (6.9 MB).
	num1000000 string
}

func newExampleEnv(t *testing.T) *exampleEnv {
	e := &exampleEnv{shim: t.TempDir(), fakes: t.TempDir(), ration: buildRation(t)}
	var b strings.Builder
	for i := 1; i <= 1000000; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	e.num1000000 = b.String()
	for name, body := range gnuFakes() {
		if err := os.WriteFile(filepath.Join(e.fakes, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.shim, "parallel"), []byte(gnuShim), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.shim, "sem"), []byte(semShim), 0o755); err != nil {
		t.Fatal(err)
	}
	return e
}

// run runs script with bash in a fresh directory holding the fixtures,
// through GNU parallel or (gnu false) ration, and returns its stdout, with
// the directory's path replaced by $W, and its exit status.
func (e *exampleEnv) run(t *testing.T, script string, gnu bool) (string, int) {
	dir := t.TempDir()
	files := gnuFixtures()
	for name, body := range gnuDataFixtures() {
		if strings.Contains(script, name) {
			files[name] = body
		}
	}
	if strings.Contains(script, "num1000000") {
		files["num1000000"] = e.num1000000
	}
	// Each example has a home of its own: the tutorial's profile examples
	// write ~/.parallel/nicetimeout, and two of them running at once
	// read each other's half-written profile. GNU parallel prints its
	// citation notice unless ~/.parallel/will-cite exists.
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, ".parallel"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".parallel", "will-cite"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(dir, "w", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// GNU parallel, a Perl program, spends about 10 ms of CPU on each
	// job: examples:289's 720 jobs took it over 10 s on a loaded 2-CPU
	// machine. The limit only catches a hang.
	limit := 10 * time.Second
	if gnu {
		limit = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	// The example's jobs go with it when it runs out of time.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	cmd.Dir = filepath.Join(dir, "w")
	path := e.fakes + string(os.PathListSeparator) + os.Getenv("PATH")
	if !gnu {
		path = e.shim + string(os.PathListSeparator) + path
	}
	cmd.Env = append(os.Environ(), "PATH="+path, "HOME="+home, "RATION_BIN="+e.ration, "RATION_JOBS=", "PARALLEL_SHELL=", "PARALLEL=", "SHELL=/bin/bash")
	cmd.Stdin = strings.NewReader("")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("timed out; stdout: %s\nstderr: %s", out.String(), errb.String())
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("bash: %v", err)
	}
	return strings.ReplaceAll(out.String(), cmd.Dir, "$W"), code
}

// sameOutput compares the outputs: exactly when the example keeps GNU
// parallel's order (-k), else as sorted lines (GNU parallel's own order
// is not defined then).
func sameOutput(script, a, b string) bool {
	if a == b {
		return true
	}
	if strings.Contains(script, " -k") || strings.Contains(script, "--keep-order") {
		return false
	}
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	slices.Sort(la)
	slices.Sort(lb)
	return slices.Equal(la, lb)
}

var (
	gnuLive   = flag.Bool("gnu", false, "TestGNUExamples: run GNU parallel too, not only its recorded results")
	gnuUpdate = flag.Bool("update-gnu", false, "TestGNUExamples: record GNU parallel's results in "+gnuGolden)
)

const gnuGolden = "testdata/gnu_examples.golden"

// gnuResult is GNU parallel's result of one example.
type gnuResult struct {
	code int
	out  string
}

// readGNUGolden reads the recorded results: "=== WHERE EXIT" lines, each
// followed by that example's stdout, as Go-quoted lines.
func readGNUGolden(t *testing.T) map[string]gnuResult {
	data, err := os.ReadFile(gnuGolden)
	if err != nil {
		t.Fatalf("%v (record it with go test -run TestGNUExamples -update-gnu)", err)
	}
	res := map[string]gnuResult{}
	for _, chunk := range strings.Split(string(data), "=== ")[1:] {
		head, body, _ := strings.Cut(chunk, "\n")
		where, code, _ := strings.Cut(head, " ")
		n, err := strconv.Atoi(code)
		if err != nil {
			t.Fatalf("%s: %q: %v", gnuGolden, head, err)
		}
		out, err := strconv.Unquote(strings.TrimSpace(body))
		if err != nil {
			t.Fatalf("%s: %s: %v", gnuGolden, where, err)
		}
		res[where] = gnuResult{n, out}
	}
	return res
}

// TestGNUExamples runs every example of parallel_tutorial(7) and
// parallel_examples(7) that needs neither ssh, SQL nor perl expressions
// (and none of what docs/compat.md lists as left out) through ration, and
// compares its stdout and exit status with GNU parallel 20221122's:
// recorded in testdata/gnu_examples.golden (GNU parallel's perl start
// takes a second per example on a busy machine, too slow for make test),
// and, with -gnu (as .ci/run does after make test), GNU parallel's own,
// run alongside: ration must then give the result GNU gave now or the
// one it recorded, since an example whose result GNU itself varies has
// both for GNU's.
func TestGNUExamples(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	_, err := exec.LookPath("parallel")
	haveGNU := err == nil
	if (*gnuLive || *gnuUpdate) && !haveGNU {
		t.Skip("GNU parallel is not installed (.ci/run installs it)")
	}
	e := newExampleEnv(t)
	// -update-gnu records the examples it runs (all, or those -run
	// selects) over the results recorded before.
	golden := map[string]gnuResult{}
	if _, err := os.Stat(gnuGolden); err == nil || !*gnuUpdate {
		golden = readGNUGolden(t)
	}
	var (
		mu         sync.Mutex
		ran, equal int
		record     = maps.Clone(golden)
	)
	exs := readGNUExamples(t)
	sem := make(chan struct{}, 4)
	t.Run("examples", func(t *testing.T) {
		for _, ex := range exs {
			timing := strings.HasPrefix(ex.status, "timing ")
			if ex.status != "run" && !timing && !strings.HasPrefix(ex.status, "adapted ") {
				continue
			}
			t.Run(ex.where, func(t *testing.T) {
				t.Parallel()
				if _, err := exec.LookPath("env_parallel.bash"); err != nil && strings.Contains(ex.script, "env_parallel.bash") {
					// parset is a bash function of GNU parallel's.
					t.Skip("GNU parallel's env_parallel.bash is not installed")
				}
				sem <- struct{}{}
				defer func() { <-sem }()
				var want gnuResult
				// recorded is GNU parallel's recorded result when it differs
				// from the one it gave now (-gnu): either is GNU's.
				var recorded *gnuResult
				if *gnuLive || *gnuUpdate {
					want.out, want.code = e.run(t, ex.script, true)
					mu.Lock()
					record[ex.where] = want
					mu.Unlock()
					if g, ok := golden[ex.where]; ok && !*gnuUpdate && (g.code != want.code || !sameOutput(ex.script, g.out, want.out)) {
						t.Logf("GNU parallel's result differs from %s's: exit %d, stdout:\n%s", gnuGolden, want.code, want.out)
						recorded = &g
					}
				} else {
					var ok bool
					if want, ok = golden[ex.where]; !ok {
						t.Fatalf("no result in %s: record it with -update-gnu", gnuGolden)
					}
				}
				out, code := e.run(t, ex.script, false)
				same := code == want.code && sameOutput(ex.script, want.out, out)
				if !same && recorded != nil && code == recorded.code && sameOutput(ex.script, recorded.out, out) {
					t.Logf("ration gave GNU parallel's recorded result")
					same = true
				}
				mu.Lock()
				ran++
				if same {
					equal++
				}
				mu.Unlock()
				switch {
				case !same && timing:
					t.Logf("differs, by %s:\n%s\nGNU parallel: exit %d, stdout:\n%s\nration: exit %d, stdout:\n%s", ex.status, ex.script, want.code, want.out, code, out)
				case !same:
					t.Errorf("%s\nGNU parallel: exit %d, stdout:\n%s\nration: exit %d, stdout:\n%s", ex.script, want.code, want.out, code, out)
				}
			})
		}
	})
	t.Logf("%d of %d examples gave the same stdout and exit status as GNU parallel", equal, ran)
	if *gnuUpdate {
		var b strings.Builder
		for _, ex := range exs {
			if r, ok := record[ex.where]; ok {
				fmt.Fprintf(&b, "=== %s %d\n%s\n", ex.where, r.code, strconv.Quote(r.out))
			}
		}
		if err := os.WriteFile(gnuGolden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
