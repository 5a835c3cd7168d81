package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/adapt"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
)

// dirCounter returns an OOMKills function that counts the entries of a
// directory: a job "raises the oom_kill counter" by creating a file there
// before it dies by a real SIGKILL. (The real-cgroup OOM kill is covered
// end to end by cmd/ration's TestWorkerAdaptiveE2E.)
func dirCounter(t *testing.T) (string, func() (int64, error)) {
	dir := t.TempDir()
	return dir, func() (int64, error) {
		es, err := os.ReadDir(dir)
		return int64(len(es)), err
	}
}

// TestOOMRetry: a job killed by SIGKILL while the counter rose is OOM-killed
// and retried once, without counting against Retries; a second OOM kill,
// or a SIGKILL without a rise, fails it.
func TestOOMRetry(t *testing.T) {
	dir, count := dirCounter(t)
	state := t.TempDir()
	// once: OOM-killed the first time only. twice: OOM-killed every time.
	// plain: SIGKILL without a rise of the counter.
	script := `case {} in
	once) [ -e ` + state + `/once ] && exit 0; touch ` + state + `/once ` + dir + `/once; kill -9 $$ ;;
	twice) touch ` + dir + `/twice-$(date +%s%N); kill -9 $$ ;;
	plain) kill -9 $$ ;;
	esac`
	var rec recorder
	var out syncBuf
	r, err := New(Config{Command: []string{"sh", "-c", script}, Input: input.Args([]string{"once", "twice", "plain", "ok"}),
		Jobs: 1, Observer: &rec, Stdout: &out, Stderr: &out, OOMKills: count})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Succeeded != 2 || sum.Failed != 2 || sum.OOMRetried != 2 {
		t.Errorf("summary %+v: want 2 succeeded (once, ok), 2 failed (twice, plain), 2 OOM retries", sum)
	}
	byInput := map[string][]event.Event{}
	for _, e := range rec.Events() {
		byInput[e.Input] = append(byInput[e.Input], e)
	}
	kinds := func(in string) string {
		var s []string
		for _, e := range byInput[in] {
			k := e.Kind.String()
			if e.Cause != event.CauseNone {
				k += ":" + string(e.Cause)
			}
			s = append(s, k)
		}
		return strings.Join(s, " ")
	}
	for in, want := range map[string]string{
		"once":  "job_started job_retried:oom job_started job_finished",
		"twice": "job_started job_retried:oom job_started job_finished:oom",
		"plain": "job_started job_finished:signal",
		"ok":    "job_started job_finished",
	} {
		if got := kinds(in); got != want {
			t.Errorf("%s: events %q, want %q", in, got, want)
		}
	}
	if es := byInput["twice"]; len(es) == 4 && !errors.Is(es[3].Err, ErrOOMKilled) {
		t.Errorf("twice: error %v, want ErrOOMKilled", es[3].Err)
	}
	if sz := strings.Count(sum.String(), "retried after an OOM kill"); sz != 1 {
		t.Errorf("summary line %q does not name the OOM retries", sum)
	}
}

// TestOOMRetryWaitsForRoom: with the runner's controller (Config.Adapt)
// halving on the JobRetried event, the OOM-killed job's retry runs only once fewer jobs
// than the halved size run beside it.
func TestOOMRetryWaitsForRoom(t *testing.T) {
	dir, count := dirCounter(t)
	state := t.TempDir()
	// "hog" is OOM-killed at once the first time; the "slow" jobs run 1s.
	script := `case {} in
	hog) [ -e ` + state + `/hog ] && { date +%s%N > ` + state + `/retried; exit 0; }; touch ` + state + `/hog ` + dir + `/hog; sleep 0.2; kill -9 $$ ;;
	*) sleep 1; date +%s%N > ` + state + `/{} ;;
	esac`
	var rec recorder
	r, err := New(Config{Command: []string{"sh", "-c", script}, Input: input.Args([]string{"hog", "s1", "s2", "s3"}),
		Jobs: 4, Adapt: &adapt.Config{HalveOnJobOOM: true}, Observer: &rec, OOMKills: count})
	if err != nil {
		t.Fatal(err)
	}
	ctrl := r.Controller()
	sum, err := r.Run(context.Background())
	if err != nil || sum.Succeeded != 4 {
		t.Fatalf("summary %+v, %v: want all 4 succeeded", sum, err)
	}
	if got := ctrl.Size(); got != 2 {
		t.Errorf("controller size %d, want 2 (halved once from 4)", got)
	}
	stamp := func(name string) time.Time {
		b, err := os.ReadFile(filepath.Join(state, name))
		if err != nil {
			t.Fatal(err)
		}
		var ns int64
		for _, c := range strings.TrimSpace(string(b)) {
			ns = ns*10 + int64(c-'0')
		}
		return time.Unix(0, ns)
	}
	// Size 2: the retry may run beside one slow job, so it waits until two
	// of the three slow jobs ended.
	ends := []time.Time{stamp("s1"), stamp("s2"), stamp("s3")}
	before := 0
	for _, e := range ends {
		if e.Before(stamp("retried")) {
			before++
		}
	}
	if before < 2 {
		t.Errorf("the retry ran when %d slow jobs had ended, want at least 2 (size 2 after halving)", before)
	}
	if rs := rec.Kind(event.PoolResized); len(rs) != 1 || rs[0].Size != 2 {
		t.Errorf("resizes %+v, want one to 2", rs)
	}
}
