// Package gnuinput is GNU parallel's input dialect on top of package input:
// several input sources combined into arguments of fields (:::, ::::,
// --link, --colsep, --header), the batching of -n/-N/-X/-s, -L/-r lines,
// -d/-E/--trim, and --pipe's blocks, file parts and round robin. Only the
// CLI and runner's GNU options use it; an embedder feeds runner an
// input.Seq instead.
//
// It imports the standard library, package input and nothing else of the
// module. Its error strings may name GNU parallel's flags: they are the
// CLI's.
package gnuinput
