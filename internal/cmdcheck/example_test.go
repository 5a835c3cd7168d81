package cmdcheck_test

import (
	"fmt"

	"github.com/ration-run/ration/internal/cmdcheck"
)

// A program that cannot be found is one error before the run; shell
// syntax in a command that runs without a shell is a hint, and the jobs
// run as written.
func Example() {
	fmt.Println(cmdcheck.Check(cmdcheck.Command{Argv: []string{"no-such-program", "-v"}}))
	fmt.Println(cmdcheck.Check(cmdcheck.Command{Argv: []string{"echo {} | tr a-z A-Z"}}))
	c := cmdcheck.Command{Argv: []string{"echo", "{}", ">", "out_{}.txt"}}
	fmt.Println(cmdcheck.Check(c))
	fmt.Println(cmdcheck.Hint(c))
	// Output:
	// cannot run "no-such-program": executable file not found in $PATH
	// "echo {} | tr a-z A-Z" is a shell command line, not a program, and runs without a shell: did you mean --shell?
	// <nil>
	// the command holds shell syntax (>) but runs without a shell: did you mean --shell?
}
