package memory

// Free is the free memory that --memfree compares: avail (MemAvailable of
// /proc/meminfo, known when haveAvail), and at most the headroom of the
// memory cgroup s reads, its limit minus its working set. A nil s, one
// that cannot be read or one without a limit adds nothing. ok is false
// when neither is known.
func Free(avail int64, haveAvail bool, s *Sampler) (free int64, ok bool) {
	free, ok = avail, haveAvail
	if s != nil {
		if rd, _, err := s.Sample(); err == nil && rd.Limit > 0 {
			room := max(rd.Limit-rd.WorkingSet, 0)
			if !ok || room < free {
				free, ok = room, true
			}
		}
	}
	return free, ok
}

// FreeGate is GNU parallel's --memfree rule on the free memory ([Free]):
// a job starts only while more than Min bytes are free, and below half of
// Min the youngest running job is stopped and queued again. A Min at or
// below 0 checks nothing.
type FreeGate struct{ Min int64 }

// Start reports whether a job may start: free (known is Free's ok) is
// known and above Min. Unknown counts as too little, as GNU parallel's.
func (g FreeGate) Start(free int64, known bool) bool {
	return g.Min <= 0 || (known && free > g.Min)
}

// StopYoungest reports whether the youngest running job is to be stopped
// and queued again: free is known and below half of Min. The caller
// leaves the last running job alone: it would start again at once, since
// a job starts whatever the gate says when no other runs.
func (g FreeGate) StopYoungest(free int64, known bool) bool {
	return g.Min > 0 && known && free < g.Min/2
}
