package runner

import (
	"testing"

	"github.com/ration-run/ration/runner/input"
)

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

// TestGNUSlotsUniqueAmongRunning pins what ration guarantees of {%}: no two
// running jobs have the same slot and every slot is in 1..Jobs. Each job
// holds a directory named by its slot while it runs (mkdir fails if another
// running job holds it) and checks {%} against $PARALLEL_JOBSLOT. Which of
// the free slots a job takes when several start together is
// TestGNUSlotsInInputOrder's.
func TestGNUSlotsUniqueAmongRunning(t *testing.T) {
	dir := t.TempDir()
	script := `s=$PARALLEL_JOBSLOT; [ "$s" = "$1" ] && [ "$s" -ge 1 ] && [ "$s" -le 3 ] || exit 4
mkdir "$0/$s" || exit 3; sleep 0.01; rmdir "$0/$s"`
	sum, out, _, err := run(t, Config{Command: []string{"sh", "-c", script, dir, "{%}"},
		Input: input.Args(nums(60)), Jobs: 3})
	if err != nil || sum.Succeeded != 60 {
		t.Errorf("summary %+v, %v: a job saw a slot out of 1..3 (exit 4) or held by a running job (exit 3); output %q", sum, err, out)
	}
}

// TestGNUSlotsInInputOrder: jobs that start together take their slots in
// input order, as GNU parallel gives them (`parallel -j4 echo {#} {%}`
// prints 1 1, 2 2, 3 3, 4 4); ration's jobs took the free slots in the
// order their goroutines ran. Each of the first -j jobs waits until all of
// them run (a barrier of files; the 20 s is a hang guard only), so they
// surely start together; every later job starts once one of them ended
// and takes the lowest free slot. Repeated, as goroutine order varies.
func TestGNUSlotsInInputOrder(t *testing.T) {
	for round := range 5 {
		dir := t.TempDir()
		script := `touch "$0/$1"; i=0; while [ $(ls "$0" | wc -l) -lt 4 ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done; echo "$1 $2"`
		sum, out, _, err := run(t, Config{Command: []string{"sh", "-c", script, dir, "{#}", "{%}"},
			Input: input.Args([]string{"a", "b", "c", "d"}), Jobs: 4, KeepOrder: true})
		if want := "1 1\n2 2\n3 3\n4 4\n"; err != nil || sum.Succeeded != 4 || out != want {
			t.Fatalf("round %d: {#} {%%} printed %q, want %q (%+v, %v)", round, out, want, sum, err)
		}
	}
}
