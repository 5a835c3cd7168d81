package runner

import "testing"

// TestSlotTable: slots in input order whatever order the jobs arrive in,
// the lowest free one once the jobs before have arrived, and never one
// above the size for a job whose predecessors never arrive.
func TestSlotTable(t *testing.T) {
	var st slotTable
	for _, c := range []struct {
		pos  int64
		want int
	}{{2, 3}, {0, 1}, {3, 4}, {1, 2}} {
		if got := st.take(c.pos, 4); got != c.want {
			t.Errorf("place %d took slot %d, want %d", c.pos, got, c.want)
		}
	}
	st.release(2)
	st.release(1)
	if got := st.take(4, 4); got != 1 {
		t.Errorf("after 1 and 2 ended: slot %d, want 1", got)
	}
	// Places 5..9 never arrive: place 10 leaves them the free slot, but
	// not above the size.
	if got := st.take(10, 4); got != 2 {
		t.Errorf("place 10 took slot %d, want 2 (the only free one)", got)
	}
	for p := int64(5); p < 10; p++ {
		st.skip(p)
	}
	st.skip(10) // arrived already: no change
	if st.next != 11 || len(st.early) != 0 {
		t.Errorf("next %d, early %v: want 11 and none", st.next, st.early)
	}
}
