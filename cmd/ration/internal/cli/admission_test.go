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
