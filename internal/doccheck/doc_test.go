// Package doccheck runs the shell blocks of README.md and docs/*.md that
// are marked runnable, with the ration built from this checkout, so that a
// command the documentation shows keeps working as written.
//
// A block is runnable when the line before its opening fence (blank lines
// between allowed) is the HTML comment `<!-- runnable -->`, which renders
// as nothing, and its fence's info string is sh or bash:
//
//	<!-- runnable -->
//	```sh
//	ration limits --json
//	```
//
// Each block runs with `sh -e` in a fresh copy of the repository's files
// (tracked and untracked-but-not-ignored, no .git), so it may read the
// repository as a user's checkout would and write what it likes, with
// `ration` on PATH. It must work offline and take a few seconds at most.
// A failing block fails the test with its file:line, exit status and output.
//
// A block after the comment `<!-- transcript -->` is a transcript: its
// first line is `$ COMMAND`, the rest the exact standard output COMMAND
// prints when run with `sh -e` in the checkout. Only commands that print
// the same on every machine (ration limits --fs-root on a snapshot under
// cgroup/testdata) and write nothing can be transcripts.
//
// The table of the fields of `ration limits --json` in docs/limits.md must
// name every field ration prints, live and for every snapshot under
// cgroup/testdata, and only those.
//
// It is tests only: of this module it imports internal/testutil, and nothing
// imports it.
package doccheck
