package main

import (
	"strings"
)

// gnuUnsupported names GNU parallel's flags that ration does not take, with
// what to use instead, for the error of an unknown flag ("" when there is
// nothing to add to "is not supported"). The keys are the flag as written
// without its dashes; one-letter keys are short flags.
var gnuUnsupported = map[string]string{
	"S":                  "ration runs on one machine; to spread work over machines run one ration per machine (a Kubernetes Indexed Job) with --shard I/N",
	"sshlogin":           "ration runs on one machine; to spread work over machines run one ration per machine (a Kubernetes Indexed Job) with --shard I/N",
	"slf":                "ration runs on one machine; to spread work over machines run one ration per machine with --shard I/N",
	"sshloginfile":       "ration runs on one machine; to spread work over machines run one ration per machine with --shard I/N",
	"onall":              "ration runs on one machine",
	"nonall":             "ration runs on one machine",
	"transferfile":       "ration runs on one machine",
	"trc":                "ration runs on one machine",
	"sqlmaster":          "ration keeps no SQL table; --joblog FILE with --resume records and resumes a run",
	"sqlworker":          "ration keeps no SQL table; --joblog FILE with --resume records and resumes a run",
	"sqlandworker":       "ration keeps no SQL table; --joblog FILE with --resume records and resumes a run",
	"semaphore":          "use ration sem, which is GNU parallel's sem (parallel --semaphore)",
	"plus":               "its replacement strings are perl expressions; use --shell and the shell's ${v%.ext} ${v#prefix} on {}",
	"rpl":                "its replacement strings are perl expressions; use --shell and the shell's ${v%.ext} on {}",
	"parens":             "its replacement strings are perl expressions",
	"quote":              "ration's default: without --shell the command's words reach the program as they are (ration's -q is --quiet)",
	"env":                "jobs inherit ration's whole environment; export the variable or function (export -f) before ration run",
	"ctag":               "use --tag",
	"ctagstring":         "use --tagstring",
	"i":                  "xargs' -i is -I {} (GNU parallel's replacement string is {} already)",
	"e":                  "xargs' -e STR is -E STR",
	"l":                  "xargs' -l N is -L N",
	"compress-program":   "ration's --compress deflates the output it spills to --tmpdir by itself, with no program to run",
	"decompress-program": "ration's --compress deflates the output it spills to --tmpdir by itself, with no program to run",
	"tmux":               "",
	"tty":                "jobs get /dev/null as stdin",
	"interactive":        "",
	"p":                  "it is --interactive",
	"fg":                 "",
	"bg":                 "",
	"record-env":         "jobs inherit ration's whole environment",
	"shebang":            "",
	"embed":              "",
	"latest-line":        "use --line-buffer",
	"csv":                "use --colsep , (quoted commas are not understood)",
}

// unknownFlagHint returns the error text for pflag's error text msg about
// an unknown flag that GNU parallel has, naming ration's equivalent; ""
// for any other error.
func unknownFlagHint(msg string) string {
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
	hint, ok := gnuUnsupported[name]
	if !ok {
		return ""
	}
	if hint != "" {
		hint = ": " + hint
	}
	return "unknown flag: " + written + " (GNU parallel's " + written + " is not supported" + hint + ")"
}
