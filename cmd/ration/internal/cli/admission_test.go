package cli

import "testing"

// TestMemorySamplerOff: RATION_MEM_ADMISSION=0 (or false, off, no) and a
// snapshot (--fs-root) turn the memory admission off.
func TestMemorySamplerOff(t *testing.T) {
	for _, v := range []string{"0", "false", "OFF", " no "} {
		getenv := func(k string) string {
			if k == MemoryAdmissionEnv {
				return v
			}
			return ""
		}
		if s := MemorySampler("", getenv, nil); s != nil {
			t.Errorf("%s=%q: admission on", MemoryAdmissionEnv, v)
		}
	}
	if s := MemorySampler(t.TempDir(), func(string) string { return "" }, nil); s != nil {
		t.Error("--fs-root: admission on")
	}
}

// TestEnvSwitch: RATION_MEM_ADMISSION, RATION_JOB_CGROUP and
// RATION_MEM_GUARD read as one switch: on, off, or neither (unset or
// anything else leaves the default).
func TestEnvSwitch(t *testing.T) {
	for _, tt := range []struct {
		value   string
		on, off bool
	}{
		{"", false, false},
		{"1", true, false}, {"true", true, false}, {" ON ", true, false}, {"yes", true, false},
		{"0", false, true}, {"false", false, true}, {"Off", false, true}, {"no", false, true},
		{"2", false, false}, {"maybe", false, false},
	} {
		getenv := func(string) string { return tt.value }
		if on, off := EnvOn(getenv, "X"), EnvOff(getenv, "X"); on != tt.on || off != tt.off {
			t.Errorf("%q: on %v, off %v; want %v, %v", tt.value, on, off, tt.on, tt.off)
		}
	}
}
