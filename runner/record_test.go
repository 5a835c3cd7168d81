package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ration-run/ration/runner/input"
	"github.com/ration-run/ration/runner/joblog"
)

// TestGNUJoblogAppendAndStdout: GNU parallel's --joblog +FILE appends to
// FILE's records (it used to empty FILE, or make a file named +FILE), and
// --joblog - writes the joblog to stdout, each record after its job's
// output (it used to make a file named -).
func TestGNUJoblogAppendAndStdout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	for _, in := range []string{"a", "b"} {
		if _, _, _, err := run(t, Config{Command: []string{"echo"}, Input: input.Args([]string{in}), Joblog: path, JoblogAppend: true}); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for e, err := range joblog.Entries(f) {
		if err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, e.Command)
	}
	f.Close()
	if !slices.Equal(cmds, []string{"echo a", "echo b"}) {
		t.Errorf("appended joblog holds %q, want both runs' records", cmds)
	}

	_, out, _, err := run(t, Config{Command: []string{"echo"}, Input: input.Args([]string{"a", "b"}), Joblog: "-", KeepOrder: true, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var got []string
	for _, l := range lines {
		if f := strings.Split(l, "\t"); len(f) == 9 {
			l = f[0] + " " + f[8]
		}
		got = append(got, l)
	}
	if want := []string{"Seq Command", "a", "1 echo a", "b", "2 echo b"}; !slices.Equal(got, want) {
		t.Errorf("--joblog - printed %q, want %q", got, want)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("--joblog - made a file named -")
	}
	if _, err := New(Config{Command: []string{"echo"}, Joblog: "-", Resume: true}); err == nil {
		t.Error("Resume with Joblog - was accepted")
	}
}
