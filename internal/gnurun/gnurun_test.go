package gnurun

import (
	"context"
	"strconv"
	"testing"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The forking thread lives as long as the process (package pdeath).
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/ration-run/ration/internal/pdeath.loop"))
}

// The shared test helpers, under the names these tests use.
type (
	syncBuf  = testutil.Buffer
	recorder = testutil.Recorder
)

// with is cfg run with the GNU options g.
func with(cfg runner.Config, g GNU) runner.Config {
	cfg.Dialect = &g
	return cfg
}

// run runs cfg with its output and events recorded, 3 jobs at once
// unless cfg says.
func run(t *testing.T, cfg runner.Config) (runner.Summary, string, *recorder, error) {
	t.Helper()
	var out syncBuf
	rec := &recorder{}
	cfg.Stdout, cfg.Stderr, cfg.Observer = &out, &out, rec
	if cfg.Jobs == 0 {
		cfg.Jobs = 3
	}
	r, err := runner.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	return sum, out.String(), rec, err
}

func nums(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i + 1)
	}
	return s
}
