//go:build unix

package semcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/sem"
	"github.com/ration-run/ration/limits"
)

// TestPlanSem: every flag of ration sem gives its plan or its error.
func TestPlanSem(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home, "PARALLEL_SHELL": "/bin/bash", "RATION_JOBS": ""}
	getenv := func(k string) string { return env[k] }
	files := map[string]string{"procfile": "3\n", "badfile": "many\n"}
	readFile := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	d, err := limits.Decide(limits.Options{Getenv: getenv, Jobs: "100%"})
	if err != nil {
		t.Fatal(err)
	}
	cpus := int(d.EffectiveCPUs)
	base := filepath.Join(home, ".parallel", "semaphores")
	def := semPlan{dir: sem.Dir(base, "not a tty"), jobs: 1, shell: "/bin/bash", command: "echo a b"}
	for _, c := range []struct {
		args []string
		want func(p *semPlan)
		err  string
	}{
		{args: []string{"echo", "a b"}},
		{args: []string{"--id", "my_id", "--fg", "-u", "echo", "a", "b"}, want: func(p *semPlan) {
			p.dir, p.fg, p.ungroup = sem.Dir(base, "my_id"), true, true
		}},
		{args: []string{"--semaphorename=x", "--bg", "--semaphore", "--will-cite", "--no-notice", "echo", "a b"}, want: func(p *semPlan) { p.dir = sem.Dir(base, "x") }},
		{args: []string{"--wait"}, want: func(p *semPlan) { p.wait, p.command = true, "" }},
		{args: []string{"--held", "echo", "a b"}, want: func(p *semPlan) { p.held, p.fg = true, true }},
		{args: []string{"-j", "3", "echo", "a b"}, want: func(p *semPlan) { p.jobs = 3 }},
		{args: []string{"-P", "procfile", "echo", "a b"}, want: func(p *semPlan) { p.jobs = 3 }},
		{args: []string{"-j", "+1", "echo", "a b"}, want: func(p *semPlan) { p.jobs = cpus + 1 }},
		{args: []string{"-j", "-100", "echo", "a b"}, want: func(p *semPlan) { p.jobs = 1 }},
		{args: []string{"-j", "200%", "echo", "a b"}, want: func(p *semPlan) { p.jobs = max(1, int(2*d.EffectiveCPUs)) }},
		{args: []string{"-j", "0", "echo", "a b"}, want: func(p *semPlan) { p.jobs = 1<<31 - 1 }},
		{args: []string{"-j", "nofile", "echo"}, err: `--jobs: "nofile" is not a number, N%, +N, -N or a readable file`},
		// One prefix, as ration run's; a file's value names the file.
		{args: []string{"-j", "0%", "echo"}, err: `--jobs: "0%" is not a percentage above 0 like 50%`},
		{args: []string{"-j", "badfile", "echo"}, err: `--jobs: badfile: "many" is not a whole number >= 1, +N, -N or a percentage like 50%`},
		{args: []string{"--semaphoretimeout", "-2", "echo", "a b"}, want: func(p *semPlan) { p.timeout = -2 * time.Second }},
		{args: []string{"--st", "1.5", "echo", "a b"}, want: func(p *semPlan) { p.timeout = 1500 * time.Millisecond }},
		{args: []string{"--st", "2m", "echo", "a b"}, want: func(p *semPlan) { p.timeout = 2 * time.Minute }},
		{args: []string{"--st", "soon", "echo"}, err: `--semaphoretimeout: "soon" is not a number of seconds`},
		{args: []string{"--fg", "--bg", "echo"}, err: "--fg and --bg cannot be combined"},
		{args: nil, err: "no command given (usage: ration sem [flags] COMMAND, or ration sem --wait)"},
	} {
		var f semFlags
		fs := newSemFlagSet(&f)
		if err := fs.Parse(c.args); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		p, err := planSem(f, fs.Args(), getenv, readFile)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		want := def
		if c.want != nil {
			c.want(&want)
		}
		if p != want {
			t.Errorf("%q:\n got %+v\nwant %+v", c.args, p, want)
		}
	}
}

// TestSemE2E: through the binary, a background sem returns while its
// command runs and holds the semaphore; --wait waits for it; --fg exits
// with the command's status; a negative --semaphoretimeout gives up with
// exit 1 and a positive one runs anyway.
func TestSemE2E(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home, "PARALLEL_HOME=", "XDG_CACHE_HOME=", "PARALLEL_SHELL=/bin/sh"}
	id := "e2e" + strings.ReplaceAll(t.Name(), "/", "_")
	marker := filepath.Join(home, "done")
	// Its stdout a file, not a pipe whose end the background child would
	// hold open for rationCmd to wait on.
	outFile := filepath.Join(home, "bg.out")
	fh, err := os.Create(outFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(buildRation(t), "sem", "--id", id, "sleep 1; echo bg; touch "+marker)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = fh, fh
	err = cmd.Run()
	fh.Close()
	if err != nil {
		t.Fatalf("background sem: %v", err)
	}
	s, err := sem.Open(sem.Dir(filepath.Join(home, ".parallel", "semaphores"), id), sem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Holders(); n != 1 || err != nil {
		t.Errorf("after a background sem returned: %d holders (%v), want its command", n, err)
	}
	_, errOut, code := rationCmd(t, "", env, "sem", "--id", id, "--semaphoretimeout", "-0.1", "echo never")
	if code != 1 || !strings.Contains(errOut, "semaphore timed out; exiting") {
		t.Errorf("sem --semaphoretimeout -0.1 while held: exit %d, stderr %q; want 1", code, errOut)
	}
	out, errOut, code := rationCmd(t, "", env, "sem", "--id", id, "--fg", "--st", "0.1", "echo stolen")
	if code != 0 || out != "stolen\n" || !strings.Contains(errOut, "stealing") {
		t.Errorf("sem --st 0.1 --fg while held: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, _, code = rationCmd(t, "", env, "sem", "--id", id, "--wait"); code != 0 {
		t.Errorf("sem --wait: exit %d", code)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("sem --wait returned before the background command ended: %v", err)
	}
	if data, _ := os.ReadFile(outFile); string(data) != "bg\n" {
		t.Errorf("the background command's output: %q, want bg", data)
	}
	out, _, code = rationCmd(t, "", env, "sem", "--id", id, "--fg", "echo out; exit 4")
	if code != 4 || out != "out\n" {
		t.Errorf("sem --fg 'exit 4': exit %d, stdout %q", code, out)
	}
	_, errOut, code = rationCmd(t, "", env, "run", "--semaphore", "echo")
	if code != exitUsage || !strings.Contains(errOut, "ration sem") {
		t.Errorf("ration run --semaphore: exit %d, stderr %q; want it to name ration sem", code, errOut)
	}
	// Only the semaphore of --id was made: the background child that runs
	// the command (sem --held) made another, of the default id ("not a
	// tty"), which no command used.
	ents, _ := os.ReadDir(filepath.Join(home, ".parallel", "semaphores"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := filepath.Base(sem.Dir(home, id)); len(names) != 1 || names[0] != want {
		t.Errorf("semaphores made: %v, want only %s", names, want)
	}
}

// TestSemFgKilledHolder: a --fg sem killed with SIGKILL while its command
// runs leaves the slot held by the command until the command ends, as a
// background sem's command holds it: the semaphore bounds the commands,
// not the sem processes (a -j1 --fg sem killed by a CI timeout used to
// let the next sem in while its command still ran).
func TestSemFgKilledHolder(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home, "PARALLEL_HOME=", "XDG_CACHE_HOME=", "PARALLEL_SHELL=/bin/sh"}
	id := "fgkill"
	ready, release := filepath.Join(home, "ready"), filepath.Join(home, "release")
	cmd := exec.Command(buildRation(t), "sem", "--fg", "-u", "--id", id,
		"touch "+ready+"; while [ ! -e "+release+" ]; do sleep 0.05; done")
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer os.WriteFile(release, nil, 0o644) // ends the orphaned command
	deadline := time.Now().Add(30 * time.Second)
	for _, err := os.Stat(ready); err != nil; _, err = os.Stat(ready) {
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	s, err := sem.Open(sem.Dir(filepath.Join(home, ".parallel", "semaphores"), id), sem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Holders(); n != 1 || err != nil {
		t.Errorf("after the --fg sem was killed, its command still running: %d holders (%v), want 1", n, err)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, code := rationCmd(t, "", env, "sem", "--id", id, "--wait"); code != 0 {
		t.Errorf("sem --wait after the command ended: exit %d", code)
	}
}

// TestSemFgSignal: SIGTERM to a --fg sem while its command runs goes to
// the command, and sem exits with the command's status once it ended,
// its output printed (it used to exit 143 at once saying "no job was
// running", leaving the command running unseen, its output lost).
func TestSemFgSignal(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home, "PARALLEL_HOME=", "XDG_CACHE_HOME=", "PARALLEL_SHELL=/bin/sh"}
	ready, release := filepath.Join(home, "ready"), filepath.Join(home, "release")
	defer os.WriteFile(release, nil, 0o644) // ends an orphaned command
	cmd := exec.Command(buildRation(t), "sem", "--fg", "--id", "fgsig",
		`trap 'echo got-term; exit 9' TERM; touch `+ready+`; while [ ! -e `+release+` ]; do sleep 0.05; done`)
	cmd.Env = append(os.Environ(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, err := os.Stat(ready); err != nil; _, err = os.Stat(ready) {
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // hang guard
		_ = cmd.Process.Kill()
		t.Fatal("sem did not end after its command did")
	}
	if code := cmd.ProcessState.ExitCode(); code != 9 || out.String() != "got-term\n" {
		t.Errorf("sem --fg after SIGTERM: exit %d, stdout %q, stderr %q; want 9 and the command's got-term", code, out.String(), errb.String())
	}
}
