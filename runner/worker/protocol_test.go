//go:build linux

package worker

import (
	"strings"
	"testing"
)

func TestParseResponse(t *testing.T) {
	for _, tc := range []struct {
		line string
		err  string // "" means valid
	}{
		{`{"id":5,"ok":true,"output":"x"}`, ""},
		{`{"id":5,"ok":true,"output":null}`, ""},
		{`{"id":5,"ok":false,"error":"bad"}` + "\r", ""},
		{`{"id":5,"ok":true,"output":{"a":[1,2]},"extra":1}`, ""},
		{``, "empty line"},
		{`hello`, "not a JSON object"},
		{`[1,2]`, "not a JSON object"},
		{`{"id":5,"ok":true,"output":1} trailing`, "not a JSON object"},
		{`{"ok":true,"output":1}`, `no "id"`},
		{`{"id":6,"ok":true,"output":1}`, `"id" 6, the task in flight is 5`},
		{`{"id":5,"output":1}`, `no "ok"`},
		{`{"id":5,"ok":true}`, `no "output"`},
		{`{"id":5,"ok":false}`, `no "error"`},
		{`{"id":5,"ok":false,"error":null}`, `no "error"`},
		{`{"id":5,"ok":false,"error":3}`, "not a JSON object"},
	} {
		_, err := parseResponse([]byte(tc.line), 5)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.line, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: got %v, want an error containing %q", tc.line, err, tc.err)
		}
	}
}

func TestEncodeRequest(t *testing.T) {
	got := string(encodeRequest(3, "a \"b\"\n\xff"))
	if want := `{"id":3,"input":"a \"b\"\n\ufffd"}` + "\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestOutputText(t *testing.T) {
	for in, want := range map[string]string{
		`"plain text"`:     "plain text",
		`"a\nb"`:           "a\nb",
		`{ "a" : [1, 2] }`: `{"a":[1,2]}`,
		`42`:               "42",
		`null`:             "null",
	} {
		if got := OutputText([]byte(in)); got != want {
			t.Errorf("OutputText(%s) = %q, want %q", in, got, want)
		}
	}
}
