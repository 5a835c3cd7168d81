package flagvalue

import (
	"strings"
	"testing"
	"time"
)

func TestParseTermSeq(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
		total         time.Duration
	}{
		{in: "TERM,200,TERM,100,TERM,50,KILL,25", want: "TERM,200,TERM,100,TERM,50,KILL,25", total: 375 * time.Millisecond},
		{in: "INT,200,TERM,100,KILL,25", want: "INT,200,TERM,100,KILL,25", total: 325 * time.Millisecond},
		{in: "sigint, 10 ,9", want: "INT,10,KILL,0", total: 10 * time.Millisecond},
		{in: "15,0", want: "TERM,0", total: 0},
		{in: "", err: "empty sequence"},
		{in: "TERM,x", err: `"x" is not a wait in milliseconds`},
		{in: "TERM,-5", err: `"-5" is not a wait in milliseconds`},
		{in: "NOPE,10", err: `"NOPE" is not a signal name`},
		{in: "0,10", err: "0 is not a signal number"},
	} {
		q, err := ParseTermSeq(c.in)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseTermSeq(%q) = %v, %v; want error %q", c.in, q, err, c.err)
			}
		case err != nil:
			t.Errorf("ParseTermSeq(%q): %v", c.in, err)
		case q.String() != c.want || q.Total() != c.total:
			t.Errorf("ParseTermSeq(%q) = %s (total %s); want %s (total %s)", c.in, q, q.Total(), c.want, c.total)
		}
	}
}
