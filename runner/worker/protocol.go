package worker

import (
	"bytes"
	"encoding/json"
	"fmt"
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
