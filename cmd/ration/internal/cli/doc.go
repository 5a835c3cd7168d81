// Package cli holds what ration's commands share: the checks of -j and
// --fs-root, usage errors and the one-line failure message, signal
// handling, the memory-guard and jobs-cgroup plans that run and limits
// print, the parent shell, the version, and the CLI's words for the
// library's errors (FilesError).
//
// The commands' packages (runcmd, limitscmd, reportcmd, manifestcmd,
// semcmd, completioncmd) import it; it must not import any of them.
package cli
