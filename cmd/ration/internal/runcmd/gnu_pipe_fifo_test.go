//go:build unix

package runcmd

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/runner"
)

// TestFIFONeverOpenedEnds: a FIFO the job never opened is removed when
// the job ends, also when ration's own writer has not yet begun to open
// it (a busy machine): the end of the job never waits for ever.
func TestFIFONeverOpenedEnds(t *testing.T) {
	dir := t.TempDir()
	pf := newPipeFiles(true, dir, runner.Shard{})
	for i := range 300 {
		end, err := pf.makeFIFO(filepath.Join(dir, fmt.Sprint(i)), strings.NewReader("block\n"))
		if err != nil {
			t.Fatal(err)
		}
		ended := make(chan struct{})
		go func() {
			end()
			close(ended)
		}()
		select {
		case <-ended:
		case <-time.After(20 * time.Second):
			t.Fatalf("FIFO %d: the end of its job waits for ever", i)
		}
	}
}
