package pool_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ration-run/ration/pool"
)

// TestNilContextPanicsFirst: Go and Close with a nil context panic with a
// message that names the call, before they change anything, so a caller
// that recovers still has an open, working pool. Before, Go failed with a
// bare nil dereference, and Close closed the pool before its dereference
// (every later Go returned ErrClosed).
func TestNilContextPanicsFirst(t *testing.T) {
	p := pool.New(2)
	defer closeEmpty(t, p, "nil context")
	nop := func(context.Context) error { return nil }
	for _, tc := range []struct {
		call string
		fn   func()
	}{
		//lint:ignore SA1012 the nil context is what is tested
		{"Go", func() { _ = p.Go(nil, nop) }},
		//lint:ignore SA1012 the nil context is what is tested
		{"Close", func() { _, _ = p.Close(nil) }},
	} {
		msg := func() (msg string) {
			defer func() {
				v := recover()
				s, _ := v.(string)
				msg = s
				if v != nil && s == "" {
					msg = "non-string panic"
				}
			}()
			tc.fn()
			return "no panic"
		}()
		if !strings.Contains(msg, "pool: "+tc.call+" called with a nil context") {
			t.Errorf("%s(nil): panic %q, want one naming the call", tc.call, msg)
		}
		if err := p.Go(context.Background(), nop); err != nil {
			t.Fatalf("after %s(nil): Go: %v, want the pool still open", tc.call, err)
		}
		if err := p.Wait(); err != nil {
			t.Fatalf("after %s(nil): Wait: %v", tc.call, err)
		}
	}
}
