package runner

import "sync"

// slotTable hands out the jobs' slots ({%}, $PARALLEL_JOBSLOT): a
// starting job takes the lowest free slot, and jobs that start together
// take theirs in input order, as if they started one by one. Jobs here
// start at once on the pool's goroutines, in no set order, so a
// job whose predecessors in input order have not arrived yet leaves them
// the lowest free slots: it takes the (k+1)-th lowest free slot when k of
// them are missing. That needs no job to wait for another. A slot is
// unique among the jobs holding one and, while no more jobs run than the
// pool's size, at most that size: were the (k+1)-th above it (a
// predecessor that never starts), the job takes the lowest free slot. The
// lock is held for a scan of the slots, never around anything else.
type slotTable struct {
	mu   sync.Mutex
	used []bool // used[s-1]: slot s is held
	// next is the lowest place (item.pos) not arrived yet; early are the
	// places above it that arrived (took a slot or never will).
	next  int64
	early map[int64]bool
}

// take gives the job at place pos its slot, size being the pool's size.
func (t *slotTable) take(pos int64, size int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.missingBefore(pos)
	t.arrive(pos)
	s := t.free(k, size)
	t.used[s-1] = true
	return s
}

// skip records that the job at place pos takes no slot (it never starts).
// It may be called for a place that arrived.
func (t *slotTable) skip(pos int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.arrive(pos)
}

// release frees slot s, taken by a job that ended.
func (t *slotTable) release(s int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s >= 1 && s <= len(t.used) {
		t.used[s-1] = false
	}
}

// missingBefore is the number of places before pos not arrived yet.
func (t *slotTable) missingBefore(pos int64) int {
	if pos <= t.next {
		return 0
	}
	n := pos - t.next
	for q := range t.early {
		if q < pos {
			n--
		}
	}
	return int(min(n, MaxJobs+1)) // free stops at the size anyway
}

// arrive marks place pos as arrived.
func (t *slotTable) arrive(pos int64) {
	switch {
	case pos < t.next || t.early[pos]:
		return
	case pos > t.next:
		if t.early == nil {
			t.early = make(map[int64]bool)
		}
		t.early[pos] = true
		return
	}
	t.next++
	for t.early[t.next] {
		delete(t.early, t.next)
		t.next++
	}
}

// free returns the (k+1)-th lowest free slot, or the lowest free slot
// when that one is above size.
func (t *slotTable) free(k, size int) int {
	lowest := 0
	for s := 1; ; s++ {
		if s > len(t.used) {
			t.used = append(t.used, false)
		}
		if t.used[s-1] {
			continue
		}
		if lowest == 0 {
			lowest = s
		}
		if s > size {
			return lowest
		}
		if k == 0 {
			return s
		}
		k--
	}
}
