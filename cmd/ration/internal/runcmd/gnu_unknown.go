package runcmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// The hints several of GNU parallel's options share.
const (
	hintOneMachine = "ration runs on one machine; to spread work over machines run one ration per machine (a Kubernetes Indexed Job) with --shard I/N"
	hintInPlace    = "ration runs on one machine, where the jobs read and write their files in place; to spread work over machines run one ration per machine with --shard I/N"
	hintSQL        = "ration keeps no SQL table; --joblog FILE with --resume records and resumes a run"
	hintCompress   = "ration's --compress deflates the output it spills to --tmpdir by itself, with no program to run"
	hintColor      = "ration prints the jobs' output uncoloured; --tag or --tagstring STR tells the jobs apart"
	hintCtrlC      = "retired; on SIGINT ration starts no more jobs and stops the running ones after --term-timeout (a second SIGINT kills them at once)"
	hintShebang    = "run ration run COMMAND :::: FILE, which reads the lines of FILE as inputs"
	hintEnv        = "jobs inherit ration's whole environment"
	hintTerminal   = "ration writes the jobs' output to its own stdout and stderr"
	hintNoTTY      = "jobs get /dev/null as stdin"
	hintCPUs       = "ration counts the effective CPUs of its limits decision (ration limits); -j N% and -j +N count those"
)

// gnuUnsupported names GNU parallel's options that ration does not take,
// by their first name in GNU parallel's option table, with what to use
// instead, for the error of an unknown flag; gnuUnsupportedAliases are
// their other names. Names are written without their dashes; one-letter
// names are short options. TestGNUOptionsCovered checks that every option
// name of GNU parallel 20221122 is a flag of ration run or one of these,
// TestCompatListsUnsupported that docs/compat.md names them all.
var gnuUnsupported = map[string]string{
	// Remote hosts.
	"sshlogin":      hintOneMachine,
	"sshloginfile":  hintOneMachine,
	"onall":         "ration runs on one machine",
	"nonall":        "ration runs on one machine",
	"filter-hosts":  hintOneMachine,
	"hgrp":          hintOneMachine,
	"ssh":           hintOneMachine,
	"ssh-delay":     hintOneMachine,
	"controlmaster": hintOneMachine,
	"transfer-file": hintInPlace,
	"transfer":      hintInPlace,
	"return":        hintInPlace,
	"trc":           hintInPlace,
	"cleanup":       hintInPlace,
	"basefile":      hintInPlace,
	"rsync-opts":    hintInPlace,
	// SQL.
	"sql-master":     hintSQL,
	"sql-worker":     hintSQL,
	"sql-and-worker": hintSQL,
	"sql":            "retired (it was --sqlmaster); " + hintSQL,
	// The semaphore: ration sem.
	"semaphore":         "use ration sem, which is GNU parallel's sem (parallel --semaphore)",
	"semaphore-name":    "use ration sem --id NAME (GNU parallel's sem)",
	"semaphore-timeout": "use ration sem --semaphoretimeout SECS (GNU parallel's sem)",
	"wait":              "use ration sem --wait (GNU parallel's sem)",
	"fg":                "use ration sem --fg (GNU parallel's sem)",
	"bg":                "use ration sem, which runs the command in the background by default (GNU parallel's sem)",
	// Replacement strings and input.
	"plus":            "its replacement strings are perl expressions; use --shell and the shell's ${v%.ext} ${v#prefix} on {}",
	"rpl":             "ration has no perl replacement strings; use --shell and the shell's ${v%.ext} on {}",
	"parens":          "ration has no perl replacement strings ({= =}); use --shell and the shell's ${v%.ext} on {}",
	"filter":          "its filters are perl expressions; leave the inputs out before ration reads them (grep)",
	"template":        "make the file in the job (--shell 'sed s/X/{}/ my.tmpl > {#}.t && prog {#}.t')",
	"csv":             "use --colsep , (quoted commas are not understood)",
	"linkinputsource": "GNU parallel's internal form of :::+ and ::::+; use :::+, ::::+ or --link",
	"i":               "xargs' -i is -I {} (GNU parallel's replacement string is {} already)",
	"e":               "xargs' -e STR is -E STR",
	"l":               "xargs' -l N is -L N",
	"quote":           "ration's default: without --shell the command's words reach the program as they are (ration's -q is --quiet)",
	"env":             hintEnv + "; export the variable or function (export -f) before ration run",
	"recordenv":       hintEnv,
	"session":         "it is env_parallel's (ration has none): " + hintEnv,
	// --pipe.
	"tee":           "every --pipe block goes to one job (bash's tee >(cmd1) >(cmd2) gives stdin to several commands)",
	"bin":           "every --pipe block goes to one job, whichever is ready with --round-robin",
	"group-by":      "--pipe cuts blocks by size at --recend and --recstart, not by a column's value",
	"block-timeout": "a --pipe block is cut when it is full or stdin ends",
	// Output.
	"ctag":                   "use --tag (" + hintColor + ")",
	"ctag-string":            "use --tagstring (" + hintColor + ")",
	"color":                  hintColor,
	"color-failed":           "ration prints the jobs' output uncoloured; it logs every failed job with its input on stderr, and --joblog FILE records each job's Exitval",
	"latest-line":            "use --line-buffer",
	"use-compress-program":   hintCompress,
	"use-decompress-program": hintCompress,
	// Terminals.
	"tmux":             hintTerminal,
	"tmux-pane":        hintTerminal,
	"tty":              hintNoTTY,
	"open-tty":         hintNoTTY,
	"interactive":      "ration asks nothing; --dry-run prints the commands it would run",
	"shebang":          hintShebang,
	"embed":            "ration is one program: call ration run from the script",
	"shell-completion": "ration help run lists its flags",
	// Resources and limits.
	"memsuspend":                     "ration suspends no job: --memfree SIZE holds job starts (and stops the youngest job when less than half is free), and --mem-per-job SIZE|auto with the memory cgroup's admission starts only the jobs that fit",
	"limit":                          "--load, --memfree and --noswap hold job starts, and -j FILE changes the number of jobs while ration runs",
	"show-limits":                    "use ration limits (the CPU and memory budget and the jobs ration picks) and --max-line-length-allowed",
	"use-cores-instead-of-threads":   hintCPUs,
	"use-sockets-instead-of-threads": hintCPUs,
	// Retired by GNU parallel itself, or its own.
	"B":                    "retired (it was --bf, --basefile); " + hintInPlace,
	"g":                    "retired (it was --group, ration's default)",
	"T":                    "retired (it was --tty); " + hintNoTTY,
	"U":                    "retired (it was --er STR, which ration takes)",
	"W":                    "retired (it was --wd DIR, which ration takes)",
	"Y":                    "retired (it was --shebang); " + hintShebang,
	"H":                    "retired (it was --halt, which ration takes)",
	"ctrl-c":               hintCtrlC,
	"no-ctrl-c":            hintCtrlC,
	"tollef":               "retired (GNU parallel refuses it too, unless --gnu)",
	"D":                    "it prints GNU parallel's own debugging output; ration's --debug (no value) logs every job's start and end",
	"bug":                  "it tests GNU parallel's bug report",
	"_pipe-means-argfiles": "an internal option of GNU parallel",
	"_test":                "an internal option of GNU parallel",
}

// gnuUnsupportedAliases are the other names of gnuUnsupported's options,
// each to its first name, as GNU parallel's option table groups them.
var gnuUnsupportedAliases = map[string]string{
	"S": "sshlogin", "slf": "sshloginfile", "filterhosts": "filter-hosts", "filter-host": "filter-hosts",
	"hostgrp": "hgrp", "hostgroup": "hgrp", "hostgroups": "hgrp", "sshdelay": "ssh-delay", "M": "controlmaster",
	"transferfile": "transfer-file", "transfer-files": "transfer-file", "transferfiles": "transfer-file", "tf": "transfer-file",
	"bf": "basefile", "rsyncopts": "rsync-opts",
	"sqlmaster": "sql-master", "sqlworker": "sql-worker", "sqlandworker": "sql-and-worker",
	"semaphorename": "semaphore-name", "id": "semaphore-name", "semaphoretimeout": "semaphore-timeout", "st": "semaphore-timeout",
	"tmpl": "template", "xapplyinputsource": "linkinputsource", "record-env": "recordenv",
	"groupby": "group-by", "blocktimeout": "block-timeout", "bt": "block-timeout",
	"ctagstring": "ctag-string", "colour": "color",
	"colour-failed": "color-failed", "colorfailed": "color-failed", "colourfailed": "color-failed", "color-fail": "color-failed",
	"colour-fail": "color-failed", "colorfail": "color-failed", "colourfail": "color-failed", "cf": "color-failed",
	"latestline": "latest-line", "ll": "latest-line",
	"compress-program": "use-compress-program", "usecompressprogram": "use-compress-program", "compressprogram": "use-compress-program",
	"decompress-program": "use-decompress-program", "usedecompressprogram": "use-decompress-program", "decompressprogram": "use-decompress-program",
	"tmuxpane": "tmux-pane", "o": "open-tty", "p": "interactive", "hashbang": "shebang", "shellcompletion": "shell-completion",
	"showlimits": "show-limits", "usecoresinsteadofthreads": "use-cores-instead-of-threads",
	"usesocketsinsteadofthreads": "use-sockets-instead-of-threads",
	"ctrlc":                      "ctrl-c", "no-ctrlc": "no-ctrl-c", "noctrlc": "no-ctrl-c",
}

// unsupportedHint returns the hint of GNU parallel's option name (a first
// name or an alias) and its first name; ok false when ration takes it.
func unsupportedHint(name string) (hint, first string, ok bool) {
	first = name
	if to, ok := gnuUnsupportedAliases[name]; ok {
		first = to
	}
	hint, ok = gnuUnsupported[first]
	return hint, first, ok
}

// unknownFlagHint returns the error text for pflag's error text msg about
// an unknown flag of fs that GNU parallel has, naming ration's equivalent,
// or that abbreviates one (abbreviationHint); "" for any other error.
func unknownFlagHint(fs *pflag.FlagSet, msg string) string {
	var name, written string
	switch {
	case strings.HasPrefix(msg, "unknown flag: --"):
		written = strings.TrimPrefix(msg, "unknown flag: ")
		name = strings.TrimPrefix(written, "--")
	case strings.HasPrefix(msg, "unknown shorthand flag: '"):
		rest := strings.TrimPrefix(msg, "unknown shorthand flag: '")
		name, _, _ = strings.Cut(rest, "'")
		written = "-" + name
	default:
		return ""
	}
	hint, first, ok := unsupportedHint(name)
	switch {
	case !ok && len(name) > 1:
		return abbreviationHint(fs, written, name)
	case !ok:
		return ""
	}
	gnu := written
	if len(name) == 1 && first != name {
		// -M: say which option it is.
		gnu += ", --" + first + ","
	}
	return "unknown flag: " + written + " (GNU parallel's " + gnu + " is not supported: " + hint + ")"
}

// abbreviationHint returns the error text for the unknown long flag
// written (name without its dashes) when it begins the names of exactly
// one option: one flag of fs (its spellings, those of gnuAliases included,
// count as one), or one option of gnuUnsupported (its names in
// gnuUnsupportedAliases included). GNU parallel reads
// such an abbreviation as that option (Getopt::Long); ration does not.
// Every option name of GNU parallel is one of those (TestGNUOptionsCovered),
// so GNU parallel finds the abbreviation ambiguous only where this does
// too. "" when it begins no name, or those of several options.
func abbreviationHint(fs *pflag.FlagSet, written, name string) string {
	// What each matching name stands for: the flag's value (two spellings
	// of a flag share it), or the unsupported option's key.
	targets := map[string]string{} // target -> its first name that begins with name
	add := func(f *pflag.Flag, as string) {
		if f == nil {
			return
		}
		t := fmt.Sprintf("%T %p", f.Value, f.Value)
		if old, ok := targets[t]; !ok || as < old {
			targets[t] = as
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if len(f.Name) > 1 && strings.HasPrefix(f.Name, name) {
			add(f, f.Name)
		}
	})
	for alias, to := range gnuAliases {
		if strings.HasPrefix(alias, name) {
			add(fs.Lookup(to), to)
		}
	}
	var keys []string // the first names of the unsupported options it abbreviates
	for k := range gnuUnsupported {
		if len(k) > 1 && strings.HasPrefix(k, name) && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for alias, k := range gnuUnsupportedAliases {
		if len(alias) > 1 && strings.HasPrefix(alias, name) && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	switch {
	case len(targets)+len(keys) != 1:
		return ""
	case len(keys) == 1:
		return "unknown flag: " + written + " (GNU parallel reads it as --" + keys[0] + ", which is not supported: " + gnuUnsupported[keys[0]] + ")"
	}
	for _, full := range targets {
		return "unknown flag: " + written + " (GNU parallel reads it as --" + full + "; ration run takes whole names only: write --" + full + ")"
	}
	return ""
}
