// Package flagvalue parses the values of ration's flags and environment
// variables into the runner's settings: durations (Go's syntax, plain
// seconds, and GNU parallel's units), --halt's policies, --termseq's
// termination sequences and shards (I/N). Its errors quote the value and
// say what is wanted, never the flag's name: the caller adds where the
// value came from. Only the CLI parses flags, so the package is internal.
//
// It belongs to the command line: it imports runner for the settings it
// fills in, and no library package may import it.
package flagvalue
