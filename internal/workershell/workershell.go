// Package workershell turns the shell command line of ration run
// --worker into a worker's argv, and checks before the run that the
// program it names exists, so that a mistyped --worker fails at once.
//
// It imports the standard library only.
package workershell

import (
	"fmt"
	"os/exec"
	"strings"
)

// Command returns the argv that runs the shell command line cmd (as
// given to --worker) as a worker: /bin/sh -c "exec CMD" when CMD starts
// with a program. The shell parses quotes, variables and redirections, and
// exec replaces it with the worker itself, so the worker is the process
// the pool watches: a worker killed by the OOM killer is seen as
// SIGKILLed, not as a shell exiting with 137. A line that starts with
// anything else (an assignment, a builtin such as cd or exec, a keyword,
// shell syntax) cannot be prefixed by exec ("exec cd" is not found) and
// runs as it is; its breaks may then be seen through the shell.
func Command(cmd string) []string {
	if execable(cmd) {
		cmd = "exec " + cmd
	}
	return []string{"/bin/sh", "-c", cmd}
}

// execable reports whether line is one simple command that starts with a
// program, so that "exec " before it replaces the shell with that
// program: not an assignment, builtin, keyword or group first, and no
// unquoted ; & | ( ) or newline anywhere ("exec a; b" would never run b).
func execable(line string) bool {
	f := strings.Fields(line)
	if len(f) == 0 || shellBuiltin(f[0]) || isAssignment(f[0]) || strings.ContainsAny(f[0][:1], "{!") {
		return false
	}
	var quote rune
	escaped := false
	for _, c := range line {
		switch {
		case escaped:
			escaped = false
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case c == '\\':
			escaped = true
		case quote == '"':
			if c == '"' {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case strings.ContainsRune(";&|()\n", c):
			return false
		}
	}
	return true
}

// isAssignment reports whether the shell word w is NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, c := range name {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// shellSyntax are the characters that make a word more than a plain
// program name or argument to the shell.
const shellSyntax = `\"'$` + "`" + `(){}[]*?<>|&;~#!`

// shellBuiltin reports whether w is a shell keyword or a builtin with no
// program of its name, which exec cannot run.
func shellBuiltin(w string) bool {
	switch w {
	case "exec", "command", "cd", "eval", "export", "set", ".", ":", "source", "exit", "return",
		"while", "for", "if", "until", "case", "select", "function", "time", "coproc",
		"break", "continue", "shift", "local", "declare", "typeset", "let", "wait",
		"ulimit", "umask", "trap", "unset", "alias", "unalias", "read", "builtin", "readonly",
		"hash", "type", "getopts", "jobs", "fg", "bg", "times", "shopt", "pushd", "popd", "dirs",
		"enable", "mapfile", "readarray", "disown", "suspend", "logout", "history", "fc":
		return true
	}
	return false
}

// CheckProgram reports an error wrapping exec.ErrNotFound when the
// program that the shell command line (as given to Command) runs
// cannot be found in PATH, so that a mistyped --worker fails at once
// rather than breaking every worker. It looks only at a line whose first
// word is plain (no quoting, expansion or other shell syntax before it);
// any other line is left to the shell, and nil is returned.
func CheckProgram(line string) error {
	if name := firstWord(line); name != "" {
		if _, err := exec.LookPath(name); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
	}
	return nil
}

// firstWord is the program a shell command line runs first, when that is
// plain to see: the first word after any VAR=value assignments (and exec,
// command or nohup), if no quoting, expansion, other shell syntax or
// builtin comes before it.
// Otherwise "" (the line is left to the shell).
func firstWord(line string) string {
	for _, w := range strings.Fields(line) {
		if strings.ContainsAny(w, shellSyntax) {
			return ""
		}
		if i := strings.IndexByte(w, '='); i > 0 {
			continue // an assignment
		}
		switch {
		case w == "exec" || w == "command" || w == "nohup":
			continue // runs the next word
		case shellBuiltin(w):
			return "" // a shell builtin or keyword: the shell decides
		}
		return w
	}
	return ""
}
