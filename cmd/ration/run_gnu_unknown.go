package main

import (
	"strings"
)

// The hints several of GNU parallel's flags share.
const (
	hintOneMachine = "ration runs on one machine; to spread work over machines run one ration per machine (a Kubernetes Indexed Job) with --shard I/N"
	hintInPlace    = "ration runs on one machine, where the jobs read and write their files in place; to spread work over machines run one ration per machine with --shard I/N"
	hintSQL        = "ration keeps no SQL table; --joblog FILE with --resume records and resumes a run"
	hintCompress   = "ration's --compress deflates the output it spills to --tmpdir by itself, with no program to run"
	hintColor      = "ration prints the jobs' output uncoloured; --tag or --tagstring STR tells the jobs apart"
	hintColorFail  = "ration prints the jobs' output uncoloured; it logs every failed job with its input on stderr, and --joblog FILE records each job's Exitval"
	hintCtrlC      = "retired; on SIGINT ration starts no more jobs and stops the running ones after --term-timeout (a second SIGINT kills them at once)"
	hintShebang    = "run ration run COMMAND :::: FILE, which reads the lines of FILE as inputs"
	hintLatest     = "use --line-buffer"
	hintSemName    = "use ration sem --id NAME (GNU parallel's sem)"
	hintSemTimeout = "use ration sem --semaphoretimeout SECS (GNU parallel's sem)"
	hintInternal   = "an internal option of GNU parallel"
)

// gnuUnsupported names GNU parallel's flags that ration does not take, with
// what to use instead, for the error of an unknown flag. The keys are the
// flag as written without its dashes; one-letter keys are short flags.
// TestGNUOptionsCovered checks that every option of GNU parallel 20221122
// is either a flag of ration run or here, and docs/compat.md lists every
// key.
var gnuUnsupported = map[string]string{
	// Remote hosts.
	"S":              hintOneMachine,
	"sshlogin":       hintOneMachine,
	"slf":            hintOneMachine,
	"sshloginfile":   hintOneMachine,
	"onall":          "ration runs on one machine",
	"nonall":         "ration runs on one machine",
	"filter-hosts":   hintOneMachine,
	"filterhosts":    hintOneMachine,
	"filter-host":    hintOneMachine,
	"hostgroups":     hintOneMachine,
	"hostgroup":      hintOneMachine,
	"hgrp":           hintOneMachine,
	"hostgrp":        hintOneMachine,
	"ssh":            hintOneMachine,
	"ssh-delay":      hintOneMachine,
	"sshdelay":       hintOneMachine,
	"controlmaster":  hintOneMachine,
	"M":              hintOneMachine + " (-M is --controlmaster)",
	"transferfile":   hintInPlace,
	"transfer-file":  hintInPlace,
	"transferfiles":  hintInPlace,
	"transfer-files": hintInPlace,
	"tf":             hintInPlace,
	"transfer":       hintInPlace,
	"return":         hintInPlace,
	"trc":            hintInPlace,
	"cleanup":        hintInPlace,
	"basefile":       hintInPlace,
	"bf":             hintInPlace,
	"rsync-opts":     hintInPlace,
	"rsyncopts":      hintInPlace,
	// SQL.
	"sqlmaster":      hintSQL,
	"sql-master":     hintSQL,
	"sqlworker":      hintSQL,
	"sql-worker":     hintSQL,
	"sqlandworker":   hintSQL,
	"sql-and-worker": hintSQL,
	"sql":            "retired (it was --sqlmaster); " + hintSQL,
	// The semaphore: ration sem.
	"semaphore":         "use ration sem, which is GNU parallel's sem (parallel --semaphore)",
	"semaphore-name":    hintSemName,
	"semaphorename":     hintSemName,
	"id":                hintSemName,
	"semaphore-timeout": hintSemTimeout,
	"semaphoretimeout":  hintSemTimeout,
	"st":                hintSemTimeout,
	"wait":              "use ration sem --wait (GNU parallel's sem)",
	"fg":                "use ration sem --fg (GNU parallel's sem)",
	"bg":                "use ration sem, which runs the command in the background by default (GNU parallel's sem)",
	// Replacement strings and input.
	"plus":              "its replacement strings are perl expressions; use --shell and the shell's ${v%.ext} ${v#prefix} on {}",
	"rpl":               "ration has no perl replacement strings; use --shell and the shell's ${v%.ext} on {}",
	"parens":            "ration has no perl replacement strings ({= =}); use --shell and the shell's ${v%.ext} on {}",
	"filter":            "its filters are perl expressions; leave the inputs out before ration reads them (grep)",
	"template":          "make the file in the job (--shell 'sed s/X/{}/ my.tmpl > {#}.t && prog {#}.t')",
	"tmpl":              "make the file in the job (--shell 'sed s/X/{}/ my.tmpl > {#}.t && prog {#}.t')",
	"csv":               "use --colsep , (quoted commas are not understood)",
	"linkinputsource":   "GNU parallel's internal form of :::+ and ::::+; use :::+, ::::+ or --link",
	"xapplyinputsource": "GNU parallel's internal form of :::+ and ::::+; use :::+, ::::+ or --link",
	"i":                 "xargs' -i is -I {} (GNU parallel's replacement string is {} already)",
	"e":                 "xargs' -e STR is -E STR",
	"l":                 "xargs' -l N is -L N",
	"quote":             "ration's default: without --shell the command's words reach the program as they are (ration's -q is --quiet)",
	"env":               "jobs inherit ration's whole environment; export the variable or function (export -f) before ration run",
	"record-env":        "jobs inherit ration's whole environment",
	"recordenv":         "jobs inherit ration's whole environment",
	"session":           "it is env_parallel's (ration has none): jobs inherit ration's whole environment",
	// --pipe.
	"tee":           "every --pipe block goes to one job (bash's tee >(cmd1) >(cmd2) gives stdin to several commands)",
	"bin":           "every --pipe block goes to one job, whichever is ready with --round-robin",
	"group-by":      "--pipe cuts blocks by size at --recend and --recstart, not by a column's value",
	"groupby":       "--pipe cuts blocks by size at --recend and --recstart, not by a column's value",
	"block-timeout": "a --pipe block is cut when it is full or stdin ends",
	"blocktimeout":  "a --pipe block is cut when it is full or stdin ends",
	"bt":            "a --pipe block is cut when it is full or stdin ends",
	// Output.
	"ctag":                   "use --tag (" + hintColor + ")",
	"ctagstring":             "use --tagstring (" + hintColor + ")",
	"ctag-string":            "use --tagstring (" + hintColor + ")",
	"color":                  hintColor,
	"colour":                 hintColor,
	"color-failed":           hintColorFail,
	"colour-failed":          hintColorFail,
	"colorfailed":            hintColorFail,
	"colourfailed":           hintColorFail,
	"color-fail":             hintColorFail,
	"colour-fail":            hintColorFail,
	"colorfail":              hintColorFail,
	"colourfail":             hintColorFail,
	"cf":                     hintColorFail,
	"latest-line":            hintLatest,
	"latestline":             hintLatest,
	"ll":                     hintLatest,
	"compress-program":       hintCompress,
	"compressprogram":        hintCompress,
	"use-compress-program":   hintCompress,
	"usecompressprogram":     hintCompress,
	"decompress-program":     hintCompress,
	"decompressprogram":      hintCompress,
	"use-decompress-program": hintCompress,
	"usedecompressprogram":   hintCompress,
	// Terminals.
	"tmux":        "ration writes the jobs' output to its own stdout and stderr",
	"tmux-pane":   "ration writes the jobs' output to its own stdout and stderr",
	"tmuxpane":    "ration writes the jobs' output to its own stdout and stderr",
	"tty":         "jobs get /dev/null as stdin",
	"open-tty":    "jobs get /dev/null as stdin",
	"o":           "jobs get /dev/null as stdin (-o is --open-tty)",
	"interactive": "ration asks nothing; --dry-run prints the commands it would run",
	"p":           "-p is --interactive; ration asks nothing, and --dry-run prints the commands it would run",
	"shebang":     hintShebang,
	"hashbang":    hintShebang,
	"embed":       "ration is one program: call ration run from the script",
	// Resources and limits.
	"memsuspend":                     "ration suspends no job: --memfree SIZE holds job starts (and stops the youngest job when less than half is free), and --mem-per-job SIZE|auto with the memory cgroup's admission starts only the jobs that fit",
	"limit":                          "--load, --memfree and --noswap hold job starts, and -j FILE changes the number of jobs while ration runs",
	"show-limits":                    "use ration limits (the CPU and memory budget and the jobs ration picks) and --max-line-length-allowed",
	"showlimits":                     "use ration limits (the CPU and memory budget and the jobs ration picks) and --max-line-length-allowed",
	"use-cores-instead-of-threads":   "ration counts the effective CPUs of its limits decision (ration limits); -j N% and -j +N count those",
	"usecoresinsteadofthreads":       "ration counts the effective CPUs of its limits decision (ration limits); -j N% and -j +N count those",
	"use-sockets-instead-of-threads": "ration counts the effective CPUs of its limits decision (ration limits); -j N% and -j +N count those",
	"usesocketsinsteadofthreads":     "ration counts the effective CPUs of its limits decision (ration limits); -j N% and -j +N count those",
	// Retired by GNU parallel itself, or its own.
	"B":                    "retired (it was --bf, --basefile); " + hintInPlace,
	"g":                    "retired (it was --group, ration's default)",
	"T":                    "retired (it was --tty); jobs get /dev/null as stdin",
	"U":                    "retired (it was --er STR, which ration takes)",
	"W":                    "retired (it was --wd DIR, which ration takes)",
	"Y":                    "retired (it was --shebang); " + hintShebang,
	"H":                    "retired (it was --halt, which ration takes)",
	"ctrl-c":               hintCtrlC,
	"ctrlc":                hintCtrlC,
	"no-ctrl-c":            hintCtrlC,
	"no-ctrlc":             hintCtrlC,
	"noctrlc":              hintCtrlC,
	"tollef":               "retired (GNU parallel refuses it too, unless --gnu)",
	"D":                    "it prints GNU parallel's own debugging output; ration's --debug (no value) logs every job's start and end",
	"bug":                  "it tests GNU parallel's bug report",
	"shell-completion":     "ration help run lists its flags",
	"shellcompletion":      "ration help run lists its flags",
	"_pipe-means-argfiles": hintInternal,
	"_test":                hintInternal,
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
	return "unknown flag: " + written + " (GNU parallel's " + written + " is not supported: " + hint + ")"
}
