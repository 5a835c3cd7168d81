package reaper_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/ration-run/ration/internal/reaper"
)

// A program that may run as a container's PID 1 starts every child through
// the Reaper; orphans the children leave behind are reaped, and each child's
// own exit status still reaches the caller.
func Example() {
	r, err := reaper.New(context.Background(), reaper.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Stop()

	cmd := exec.Command("sh", "-c", "sleep 0.01 & exit 3")
	if err := r.Start(cmd); err != nil {
		fmt.Println(err)
		return
	}
	var ee *exec.ExitError
	if err := r.Wait(cmd); errors.As(err, &ee) {
		fmt.Println("exit status", ee.ExitCode())
	}
	// Output: exit status 3
}
