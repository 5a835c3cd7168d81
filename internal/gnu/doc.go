// Package gnu holds GNU parallel's formats that ration reproduces: the
// --results directory layout and its header order, the --results table's
// rows, --tag's line prefixing and --_parset's shell assignments. The
// GNU options of ration run (internal/gnurun) write through them. It owns
// formats only: it must not import runner or gnurun (which import it) nor
// run jobs.
package gnu
