package memory

import (
	"fmt"
	"testing"
)

func TestJobsFit(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct {
		limit, perJob int64
		n             int
		share         string
	}{
		{256 * mib, 100 * mib, 2, "2.30"},
		{4 << 30, 1 << 30, 3, "3.60"},
		{1000 * mib, 200 * mib, 4, "4.50"},
		{256 * mib, 300 * mib, 0, "0.77"}, // not even one
		{1000, 300, 3, "3.00"},            // exactly 3
		{0, 100, 0, "0.00"},
		{100, 0, 0, "0.00"},
		{-1, 100, 0, "0.00"},
	} {
		n, share := JobsFit(tt.limit, tt.perJob)
		if n != tt.n || fmt.Sprintf("%.2f", share) != tt.share {
			t.Errorf("JobsFit(%d, %d) = %d, %.2f; want %d, %s", tt.limit, tt.perJob, n, share, tt.n, tt.share)
		}
	}
}
