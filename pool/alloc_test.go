package pool_test

import (
	"context"
	"testing"

	"github.com/ration-run/ration/pool"
)

// TestNoAllocsPerItem: Go, Group.Go, Map and MapOrdered allocate nothing
// per item once warm (a Map's fixed setup is not per item: the test
// compares 2,000 items with 1,000).
func TestNoAllocsPerItem(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	p := newPool(t, 4)
	ctx := context.Background()
	id := func(_ context.Context, i int) (int, error) { return i, nil }
	maps := map[string]func(n int){
		"Go": func(n int) {
			for range n {
				p.Go(ctx, nop)
			}
			p.Wait()
		},
		"Group.Go": func(n int) {
			g, _ := p.Group(ctx)
			for range n {
				g.Go(nop)
			}
			g.Wait()
		},
		"Map": func(n int) {
			for range pool.Map(ctx, p, seqN(n), id) {
			}
		},
		"MapOrdered": func(n int) {
			for range pool.MapOrdered(ctx, p, seqN(n), id) {
			}
		},
	}
	for name, run := range maps {
		small := testing.AllocsPerRun(20, func() { run(1000) })
		large := testing.AllocsPerRun(20, func() { run(2000) })
		t.Logf("%s: %.1f allocs for 1,000 items, %.1f for 2,000", name, small, large)
		// A few allocations may come from the runtime (timers, goroutine
		// stacks); one per item would show as +1,000.
		if large-small > 20 {
			t.Errorf("%s: %.1f more allocations for 1,000 more items", name, large-small)
		}
	}
}
