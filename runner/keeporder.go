package runner

import "sync"

// liveOrder is the state of -k --line-buffer (Config.KeepOrder with
// LineBuffer): the job first in input order
// prints its lines as they come; every other job's output is held, as with
// -k alone, until the jobs before it were printed, and it is then printed
// whole (stdout, then stderr) and its lines from then on as they come.
// head is the place (item.pos) of the job whose turn it is; outs are the
// outputs of the jobs running, by place. Outputs are printed outside mu.
type liveOrder struct {
	mu   sync.Mutex
	head int64
	outs map[int64]*output
}

// printsLive reports whether the run prints -k --line-buffer's way.
func (r *Runner) printsLive() bool { return r.cfg.KeepOrder && r.cfg.LineBuffer }

// liveAdd registers the output of the job at place pos, which goes live at
// once when it is first in order.
func (r *Runner) liveAdd(pos int64, o *output) {
	l := &r.live
	l.mu.Lock()
	if l.outs == nil {
		l.outs = make(map[int64]*output)
	}
	l.outs[pos] = o
	first := pos == l.head
	l.mu.Unlock()
	if first {
		o.goLive()
	}
}

// liveRemove forgets the output of the job at place pos, which ended.
func (r *Runner) liveRemove(pos int64) {
	l := &r.live
	l.mu.Lock()
	delete(l.outs, pos)
	l.mu.Unlock()
}

// liveNext makes the job at place pos first in order, once the job before
// it was printed (Run's loop, which prints in order): when it runs, what
// it held is printed and its lines from then on as they come. When it
// already ended, Run's loop prints it next.
func (r *Runner) liveNext(pos int64) {
	l := &r.live
	l.mu.Lock()
	l.head = pos
	o := l.outs[pos]
	l.mu.Unlock()
	if o != nil {
		o.goLive()
	}
}
