package flagvalue

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ration-run/ration/runner"
)

// ParseHalt parses a --halt value as GNU parallel does: "never",
// "now|soon,fail|success|done=N|P%", a bare "P%" (soon,fail=P%), and the
// legacy numbers 0 (never), 1 (soon,fail=1), 2 (now,fail=1), -1
// (soon,success=1), -2 (now,success=1). The error quotes s and says
// what is wanted.
func ParseHalt(s string) (runner.Halt, error) {
	legacy := map[string]string{"0": "never", "1": "soon,fail=1", "2": "now,fail=1", "-1": "soon,success=1", "-2": "now,success=1"}
	v := strings.TrimSpace(s)
	if l, ok := legacy[v]; ok {
		v = l
	}
	if strings.HasSuffix(v, "%") && !strings.Contains(v, ",") {
		v = "soon,fail=" + v
	}
	bad := func() (runner.Halt, error) {
		return runner.Halt{}, fmt.Errorf("%q: want never, or now|soon,fail|success|done=N|P%%", s)
	}
	if v == "never" {
		return runner.Halt{}, nil
	}
	when, rest, ok := strings.Cut(v, ",")
	if !ok {
		return bad()
	}
	var h runner.Halt
	switch when {
	case "now":
		h.When = runner.HaltNow
	case "soon":
		h.When = runner.HaltSoon
	default:
		return bad()
	}
	on, val, ok := strings.Cut(rest, "=")
	if !ok {
		return bad()
	}
	switch on {
	case "fail":
		h.On = runner.HaltOnFail
	case "success":
		h.On = runner.HaltOnSuccess
	case "done":
		h.On = runner.HaltOnDone
	default:
		return bad()
	}
	if p, ok := strings.CutSuffix(val, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || !(f > 0 && f <= 100) {
			return bad()
		}
		h.Percent = f
		return h, nil
	}
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil || n < 1 {
		return bad()
	}
	h.Count = n
	return h, nil
}
