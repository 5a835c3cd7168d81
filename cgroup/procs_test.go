package cgroup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProcs: the processes of a cgroup and of its descendants, from
// cgroup.procs files as the kernel writes them.
func TestProcs(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string // path below the cgroup: cgroup.procs content
		want  []int
		err   string
	}{
		{"one process", map[string]string{"": "812\n"}, []int{812}, ""},
		{"empty (v2 inner node)", map[string]string{"": ""}, nil, ""},
		{"descendants", map[string]string{"": "1\n2\n", "job-a": "30\n", "job-a/x": "31\n", "job-b": ""}, []int{1, 2, 30, 31}, ""},
		{"no trailing newline", map[string]string{"": "7"}, []int{7}, ""},
		{"garbage", map[string]string{"": "12\nabc\n"}, nil, `not a process ID: "abc"`},
		{"zero", map[string]string{"": "0\n"}, nil, `not a process ID: "0"`},
		{"garbage below", map[string]string{"": "1\n", "child": "-3\n"}, nil, `not a process ID: "-3"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for rel, content := range tt.files {
				d := filepath.Join(dir, rel)
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Procs(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Procs = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestProcsMissing: a cgroup that is gone is an error wrapping
// fs.ErrNotExist; a directory below it without cgroup.procs (removed
// between the listing and the read) is skipped.
func TestProcsMissing(t *testing.T) {
	if _, err := Procs(filepath.Join(t.TempDir(), "gone")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing cgroup: err %v, want fs.ErrNotExist", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte("5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "removed"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Procs(dir); err != nil || !slices.Equal(got, []int{5}) {
		t.Errorf("Procs = %v, %v; want [5]", got, err)
	}
}

func FuzzAppendProcs(f *testing.F) {
	f.Add([]byte("1\n2\n"))
	f.Add([]byte(""))
	f.Add([]byte("x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pids, err := appendProcs(nil, data)
		for _, p := range pids {
			if p <= 0 {
				t.Fatalf("pid %d from %q", p, data)
			}
		}
		if err == nil && len(pids) > strings.Count(string(data), "\n")+1 {
			t.Fatalf("%d pids from %q", len(pids), data)
		}
	})
}
