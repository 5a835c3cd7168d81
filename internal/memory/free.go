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
