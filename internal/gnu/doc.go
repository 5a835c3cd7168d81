// Package gnu holds GNU parallel's formats that ration reproduces: the
// --results directory layout and its header order, the --results table's
// rows, --tag's line prefixing and --_parset's shell assignments. The
// runner's GNU options (runner.GNU) write through them. It owns formats
// only: it must not import runner (the runner imports it) nor run jobs.
package gnu
