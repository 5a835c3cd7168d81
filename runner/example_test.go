package runner_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/input"
)

func Example() {
	r, err := runner.New(runner.Config{
		Command:   []string{"echo", "{#}:", "{/.}"},
		Input:     input.Args([]string{"src/a.go", "docs/my notes.txt"}),
		Jobs:      2,
		KeepOrder: true,
		Stdout:    os.Stdout,
	})
	if err != nil {
		panic(err)
	}
	sum, err := r.Run(context.Background())
	fmt.Println(sum.Succeeded, sum.Failed, err)
	// Output:
	// 1: a
	// 2: my notes
	// 2 0 <nil>
}
