package runcmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// helpGroup is one section of `ration run --help`: a purpose and the
// flags that serve it, in the order they are listed.
type helpGroup struct {
	title string
	flags []string
}

// helpGroups returns the sections of `ration run --help`, by purpose, GNU
// parallel's compatibility last. Every flag of newRunFlagSet that is
// neither hidden nor another name of a flag ("same as --X") is in one of
// them (TestRunHelpGroupsEveryFlag); the other names are listed on their
// flag's line.
func helpGroups() []helpGroup {
	return []helpGroup{
		{"Inputs", []string{"arg-file", "null", "delimiter", "files", "exclude", "hidden", "gitignore",
			"link", "colsep", "header", "trim", "eof", "no-run-if-empty", "skip-first-line", "manifest", "shard", "shuf",
			"arg-sep", "arg-file-sep"}},
		{"Command and replacement strings", []string{"shell", "replace", "extensionreplace", "basenamereplace",
			"dirnamereplace", "basenameextensionreplace", "seqreplace", "slotreplace", "max-args", "max-replace-args",
			"max-lines", "max-chars", "multi-replace", "context-replace", "xargs", "workdir", "nice",
			"process-slot-var", "dry-run"}},
		{"How many jobs", []string{"jobs", "mem-per-job", "watch-limits", "watch-interval", "fs-root",
			"load", "memfree", "noswap", "delay"}},
		{"Workers (--worker)", []string{"worker", "max-breaks", "worker-max-tasks", "worker-max-rss"}},
		{"Output", []string{"keep-order", "no-keep-order", "line-buffer", "group", "tag", "tagstring",
			"print-commands", "silent", "verbose", "results", "output-files", "tmpdir", "compress"}},
		{"Joblog and resume", []string{"joblog", "resume", "resume-failed", "resume-any-command", "retry-failed"}},
		{"Failures and retries", []string{"retries", "timeout", "termseq", "term-timeout", "halt", "exit-count"}},
		{"Watching a run", []string{"bar", "no-bar", "total-jobs", "quiet", "log-format", "debug",
			"metrics-addr", "stall-timeout", "slow-factor"}},
		{"Standard input cut into blocks (--pipe)", []string{"pipe", "pipepart", "block", "recend", "recstart",
			"regexp", "remove-rec-sep", "round-robin", "cat", "fifo"}},
		{"GNU parallel compatibility", []string{"profile", "plain", "version", "minversion", "number-of-cores",
			"number-of-threads", "number-of-sockets", "max-line-length-allowed", "shellquote", "gnu", "will-cite",
			"no-notice", "exit", "use-cpus-instead-of-cores"}},
		{"", []string{"help"}},
	}
}

// aliasOf returns the flag that f is another name of: the X of a usage
// "same as --X", "" when f is a flag of its own.
func aliasOf(f *pflag.Flag) string {
	rest, ok := strings.CutPrefix(f.Usage, "same as --")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, " ")
	return strings.TrimRight(name, ":,")
}

// printRunHelp writes the flags of fs grouped as helpGroups says, one line
// each: every name of the flag (its other names folded in), its
// placeholder, what it does and its default.
func printRunHelp(w io.Writer, fs *pflag.FlagSet) error {
	aliases := map[string][]*pflag.Flag{}
	fs.VisitAll(func(f *pflag.Flag) {
		if to := aliasOf(f); to != "" && !f.Hidden {
			aliases[to] = append(aliases[to], f)
		}
	})
	for i, g := range helpGroups() {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if g.title != "" {
			fmt.Fprintf(w, "%s:\n", g.title)
		}
		for _, name := range g.flags {
			f := fs.Lookup(name)
			if f == nil {
				return fmt.Errorf("help: no flag --%s", name)
			}
			names, usage := flagNames(f, aliases[name])
			writeHelpLine(w, names, usage)
		}
	}
	return nil
}

// Help lines fit helpWidth columns: the names take the first
// helpNameWidth, and what the flag does the rest, wrapped at spaces (on
// the next line where the names are longer).
const (
	helpWidth     = 80
	helpNameWidth = 28
)

// writeHelpLine writes a flag's names and its usage as help lines.
func writeHelpLine(w io.Writer, names, usage string) {
	line := "  " + names
	if len(line) > helpNameWidth-2 {
		fmt.Fprintln(w, line)
		line = ""
	}
	for _, l := range wrap(usage, helpWidth-helpNameWidth) {
		fmt.Fprintf(w, "%-*s%s\n", helpNameWidth, line, l)
		line = ""
	}
}

// wrap cuts s at spaces into lines of at most width characters (a word
// longer than width stands alone on its line).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) > width:
			lines = append(lines, line)
			line = word
		default:
			line += " " + word
		}
	}
	return append(lines, line)
}

// flagNames returns f's names with its placeholder ("-j, --jobs, -P,
// --max-procs N": the flag's own names first, as pflag lists them), and
// its usage with the default, if any, after it.
func flagNames(f *pflag.Flag, aliases []*pflag.Flag) (string, string) {
	var names []string
	for _, a := range append([]*pflag.Flag{f}, aliases...) {
		if a.Shorthand != "" {
			names = append(names, "-"+a.Shorthand)
		}
		names = append(names, "--"+a.Name)
	}
	placeholder, usage := pflag.UnquoteUsage(f)
	if isBool(f) {
		placeholder = ""
	}
	line := strings.Join(names, ", ")
	if f.Shorthand == "" {
		line = "    " + line // aligned with the long names after a "-x, "
	}
	if placeholder != "" {
		line += " " + placeholder
	}
	if d := shownDefault(f); d != "" {
		usage += " (default " + d + ")"
	}
	return line, usage
}

// isBool reports whether f takes no value (a bool, or a count like
// --shellquote).
func isBool(f *pflag.Flag) bool {
	if f.NoOptDefVal == "true" {
		return true
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// shownDefault is the default of f worth saying: none for an empty,
// zero or false one (those a flag's absence says).
func shownDefault(f *pflag.Flag) string {
	switch f.DefValue {
	case "", "0", "false", "[]":
		return ""
	}
	return f.DefValue
}
