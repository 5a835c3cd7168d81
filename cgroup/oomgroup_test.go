package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOOMGroup(t *testing.T) {
	for _, tc := range []struct {
		name, body     string // body "": no file
		wantOn, wantOK bool
		wantErr        bool
	}{
		{"set", "1\n", true, true, false},
		{"unset", "0\n", false, true, false},
		{"no file (cgroup v1)", "", false, false, false},
		{"malformed", "yes\n", false, false, true},
	} {
		dir := t.TempDir()
		if tc.body != "" {
			if err := os.WriteFile(filepath.Join(dir, "memory.oom.group"), []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		on, ok, err := OOMGroup(dir)
		if on != tc.wantOn || ok != tc.wantOK || (err != nil) != tc.wantErr {
			t.Errorf("%s: OOMGroup = %v, %v, %v; want %v, %v, error %v", tc.name, on, ok, err, tc.wantOn, tc.wantOK, tc.wantErr)
		}
	}
}
