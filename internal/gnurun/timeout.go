package gnurun

import (
	"context"
	"fmt"
	"time"

	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/runner"
)

// minPercentTimeout is the least limit --timeout P% sets. A timeout is
// there to stop jobs that hang, and the runtime of jobs much shorter than
// a second varies with the machine's load by more than their own length:
// a 2 ms echo takes 20 ms on a busy machine, and 300% of a median of 2 ms
// stopped it (GNU parallel's tutorial example did so under make test's
// load).
const minPercentTimeout = time.Second

// percentTimeout wraps an attempt's context for --timeout P%: it is
// cancelled with runner.ErrTimeout once the attempt ran longer than P% of the
// median runtime of the succeeded jobs, and longer than
// minPercentTimeout (no limit before one succeeded): an attempt hook's
// bound (Install).
func (r *state) percentTimeout(ctx context.Context, _ runhook.Job) (context.Context, context.CancelFunc) {
	pct := r.g.TimeoutPercent
	start := time.Now()
	pctx, pcancel := context.WithCancelCause(ctx)
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
			}
			med := r.runtimes.Median()
			if med <= 0 {
				continue
			}
			if limit := max(time.Duration(float64(med)*pct/100), minPercentTimeout); time.Since(start) > limit {
				pcancel(fmt.Errorf("%w after %s (%g%% of the succeeded jobs' median runtime, %s, and at least %s)",
					runner.ErrTimeout, limit.Round(time.Millisecond), pct, med.Round(time.Millisecond), minPercentTimeout))
				return
			}
		}
	}()
	return pctx, func() { pcancel(nil) }
}

// ended feeds --timeout P%'s median with the runtime of each job that
// succeeded.
func (r *state) ended(_ runhook.Job, succeeded bool, runtime time.Duration) {
	if r.g.TimeoutPercent > 0 && succeeded {
		r.runtimes.Add(runtime)
	}
}
