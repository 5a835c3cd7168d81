package main

import (
	"fmt"
	"io"
)

// cmdReport is a placeholder until the report subcommand lands.
func cmdReport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "ration report: not implemented yet")
	return exitUsage
}
