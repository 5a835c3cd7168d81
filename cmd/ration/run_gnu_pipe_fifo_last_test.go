//go:build unix

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFIFONeverOpenedEnds: a FIFO the job never opened is removed when
// the job ends, also when ration's own writer has not yet begun to open
// it (a busy machine): the end of the job never waits for ever.
func TestFIFONeverOpenedEnds(t *testing.T) {
	pf := newPipeFiles(true, func(err error) { t.Error(err) })
	dir := t.TempDir()
	for i := range 300 {
		end := pf.makeFIFO(filepath.Join(dir, fmt.Sprint(i)), strings.NewReader("block\n"))
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
