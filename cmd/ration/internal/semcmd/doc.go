// Package semcmd is `ration sem`: GNU parallel's --semaphore, a command
// that waits for one of N slots shared between processes (package
// internal/sem) and runs while it holds it.
//
// It imports internal/sem, limits and the command line's shared packages
// (cli, flagvalue, logs, closedpipe); it must not import another
// command's package.
package semcmd
