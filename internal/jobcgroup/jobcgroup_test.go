package jobcgroup_test

import (
	"testing"

	"github.com/ration-run/ration/internal/jobcgroup"
)

func TestDefaultReserve(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct {
		rss, limit, want int64
	}{
		{12 * mib, 200 * mib, 24 * mib},            // twice the RSS
		{4 * mib, 200 * mib, jobcgroup.MinReserve}, // at least the minimum
		{12 * mib, 64 * mib, 16 * mib},             // at most a quarter of the limit
		{0, 32 * mib, 8 * mib},                     // RSS unknown, small limit
		{200 * mib, 8 << 30, 400 * mib},
	} {
		if got := jobcgroup.DefaultReserve(tt.rss, tt.limit); got != tt.want {
			t.Errorf("DefaultReserve(%d, %d) = %d, want %d", tt.rss, tt.limit, got, tt.want)
		}
	}
}

// A nil Group is "no group": every method is safe and says so.
func TestNilGroup(t *testing.T) {
	var g *jobcgroup.Group
	if g.Tasks() != "" {
		t.Errorf("Tasks() = %q, want \"\"", g.Tasks())
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	g.SetProcAttr(nil)
	if g.String() == "" {
		t.Error("String() is empty")
	}
}
