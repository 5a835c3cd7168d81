package flagvalue

import (
	"strings"
	"testing"

	"github.com/ration-run/ration/runner"
)

func TestParseHalt(t *testing.T) {
	h, err := ParseHalt("now,fail=1")
	if err != nil || h != (runner.Halt{When: runner.HaltNow, On: runner.HaltOnFail, Count: 1}) {
		t.Errorf("%+v %v", h, err)
	}
	h, err = ParseHalt("20%")
	if err != nil || h != (runner.Halt{When: runner.HaltSoon, On: runner.HaltOnFail, Percent: 20}) {
		t.Errorf("%+v %v", h, err)
	}
	for _, in := range []string{"later,fail=1", "now", "now,fail=0", "now,x=1", "now,fail=150%"} {
		if _, err := ParseHalt(in); err == nil || strings.Contains(err.Error(), "--") || strings.Contains(err.Error(), "usage error") {
			t.Errorf("ParseHalt(%q): %v", in, err)
		}
	}
}
