package joblog

// Skipper decides, job by job in input order, which jobs of a resumed run
// a Record says are done, and the number each other job runs under. A job
// is matched to a record by its command (the Command column: the command
// with its inputs substituted), never by its number, so a resume skips
// exactly the inputs that ended, whatever was added, removed, moved or
// reordered in between:
//
//   - Each record matches one job: a command that is in the input k times
//     and ended m times is skipped min(k, m) times and runs k-m times.
//     Several records of one command under one number (a job run again
//     by --resume-failed) are one job, which succeeded if one of them did.
//   - Without failedOnly (--resume) a matched job is skipped whatever its
//     status. With failedOnly (--resume-failed) only a job matched to a
//     success is skipped; one matched to a failure runs again under the
//     number it failed under, as GNU parallel runs job N again as N.
//   - Among the records of one command, a job takes first (with
//     failedOnly) a success, then the record under its own number, then
//     the lowest number, so that a log of the same input resumes as GNU
//     parallel's would.
//   - A job that matches no record runs under its own number if no
//     record and no job before it in this run holds that number, else
//     under the next number above every number in the Record and this
//     run. No two jobs of a log ever share a number.
//
// A Skipper is not safe for concurrent use.
type Skipper struct {
	rec        *Record
	failedOnly bool
	used       bitset // numbers given to jobs of this run
	next       int64  // the highest number given out above the Record's
}

// Skipper returns a Skipper over r; failedOnly skips only the jobs that
// succeeded (--resume-failed).
func (r *Record) Skipper(failedOnly bool) *Skipper {
	return &Skipper{rec: r, failedOnly: failedOnly, next: r.maxSeq}
}

// Next takes the job whose command is command (as Display shows it, not
// yet escaped or cut) and whose number in input order is seq. It reports
// whether the job is done (skip it), else the number to run it under.
func (s *Skipper) Next(command string, seq int64) (skip bool, runAs int64) {
	if o := s.take(escaper.Replace(command), seq); o != nil {
		if !s.failedOnly || o.succeeded {
			return true, o.seq
		}
		return false, o.seq
	}
	return false, s.number(seq)
}

// take marks and returns the best record of column for the job numbered
// seq (see Skipper), or nil when none is left.
func (s *Skipper) take(column string, seq int64) *occurrence {
	c := &s.rec.cmds
	var best *occurrence
	bestRank := 0
	c.lists(column, func(i int32) {
		for ; i >= 0; i = c.occs[i].next {
			o := &c.occs[i]
			if o.taken {
				continue
			}
			rank := 0
			if s.failedOnly && !o.succeeded {
				rank += 2
			}
			if o.seq != seq {
				rank++
			}
			if best == nil || rank < bestRank || rank == bestRank && o.seq < best.seq {
				best, bestRank = o, rank
			}
		}
	})
	if best != nil {
		best.taken = true
	}
	return best
}

// number returns the number of a job that matched no record.
func (s *Skipper) number(seq int64) int64 {
	if seq > 0 && seq <= MaxSeq && !s.rec.ended.has(seq) && !s.used.has(seq) {
		s.used.set(seq)
		return seq
	}
	for {
		s.next++
		if !s.rec.ended.has(s.next) && !s.used.has(s.next) {
			s.used.set(s.next)
			return s.next
		}
	}
}
