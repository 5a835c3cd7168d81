package main

import (
	"fmt"
	"io"
)

// cmdRun is a placeholder until the run subcommand lands.
func cmdRun(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "ration run: not implemented yet")
	return exitUsage
}
