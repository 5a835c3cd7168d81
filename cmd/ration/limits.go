package main

import (
	"fmt"
	"io"
)

// cmdLimits is a placeholder until the limits subcommand lands.
func cmdLimits(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "ration limits: not implemented yet")
	return exitUsage
}
