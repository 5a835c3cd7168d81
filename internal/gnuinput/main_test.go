package gnuinput

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/ration-run/ration/runner/input"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// collect drains s, failing t at its first error.
func collect(t *testing.T, s input.Seq) []string {
	t.Helper()
	var out []string
	for v, err := range s {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}
