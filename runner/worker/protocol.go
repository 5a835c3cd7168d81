package worker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// request is the line written to a worker's stdin.
type request struct {
	ID    int64  `json:"id"`
	Input string `json:"input"`
}

// RequestLine returns the protocol line, without its newline, that a pool
// writes to a worker's stdin to give it input as the request with that id,
// e.g. {"id":1,"input":"a"}. The id of a task is its Task.Seq (the job
// number, as `ration run --dry-run --worker` shows it), the same for
// every attempt; a task without one gets a pool-wide number.
func RequestLine(id int64, input string) string {
	return string(bytes.TrimSuffix(encodeRequest(id, input), []byte("\n")))
}

func encodeRequest(id int64, input string) []byte {
	b, _ := json.Marshal(request{ID: id, Input: input}) // a struct of an int and a string cannot fail
	return append(b, '\n')
}

// response is a decoded answer line. Pointer fields tell a missing field
// from a zero one.
type response struct {
	ID     *int64          `json:"id"`
	OK     *bool           `json:"ok"`
	Output json.RawMessage `json:"output"`
	Error  *string         `json:"error"`
}

// parseResponse checks one stdout line against the protocol and the id of
// the request in flight. The error says what is wrong, for a protocol break.
func parseResponse(line []byte, want int64) (response, error) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	var r response
	if len(bytes.TrimSpace(line)) == 0 {
		return r, fmt.Errorf("empty line on stdout")
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return r, fmt.Errorf("stdout line is not a JSON object (%v): %s", err, quoteLine(line))
	}
	switch {
	case r.ID == nil:
		return r, fmt.Errorf(`answer has no "id": %s`, quoteLine(line))
	case *r.ID != want:
		return r, &wrongIDError{got: *r.ID, want: want}
	case r.OK == nil:
		return r, fmt.Errorf(`answer has no "ok": %s`, quoteLine(line))
	case *r.OK && r.Output == nil:
		return r, fmt.Errorf(`answer has "ok":true but no "output": %s`, quoteLine(line))
	case !*r.OK && r.Error == nil:
		return r, fmt.Errorf(`answer has "ok":false but no "error" string: %s`, quoteLine(line))
	}
	return r, nil
}

// wrongIDError is an answer whose id is not the task in flight's: a
// second answer to an earlier task, or an id the pool never sent. It is
// the worker's break, not the task's: the task in flight did nothing
// wrong (Pool.Run re-dispatches it without counting the break).
type wrongIDError struct{ got, want int64 }

func (e *wrongIDError) Error() string {
	return fmt.Sprintf(`answer has "id" %d, the task in flight is %d`, e.got, e.want)
}

// quoteLine quotes at most 200 bytes of a line for an error message.
func quoteLine(b []byte) string {
	const n = 200
	if len(b) > n {
		return fmt.Sprintf("%q...", b[:n])
	}
	return fmt.Sprintf("%q", b)
}

// OutputText is how ration prints a task's output: a JSON string as the
// string itself, any other JSON value as compact JSON.
func OutputText(out json.RawMessage) string {
	var s string
	if len(out) > 0 && out[0] == '"' && json.Unmarshal(out, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, out) == nil {
		return buf.String()
	}
	return string(out)
}

// ShellCommand returns the argv that runs the shell command line cmd (as
// given to --worker) as a worker: /bin/sh -c "exec CMD" when CMD starts
// with a program. The shell parses quotes, variables and redirections, and
// exec replaces it with the worker itself, so the worker is the process
// the pool watches: a worker killed by the OOM killer is seen as
// SIGKILLed, not as a shell exiting with 137. A line that starts with
// anything else (an assignment, a builtin such as cd or exec, a keyword,
// shell syntax) cannot be prefixed by exec ("exec cd" is not found) and
// runs as it is; its breaks may then be seen through the shell.
func ShellCommand(cmd string) []string {
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
