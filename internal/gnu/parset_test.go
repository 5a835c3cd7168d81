package gnu

import (
	"os/exec"
	"strings"
	"testing"
)

// TestParsetEvalRoundTrip: what --_parset prints, eval'ed by bash as GNU
// parallel's parset function does, gives back every job's output less one
// trailing newline, whatever bytes it holds.
func TestParsetEvalRoundTrip(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	outs := []string{"a\n", "two words\n", "it's \"quoted\"\n", "$HOME `x` \\ !\n", "1\n2\n3\n", "", "no newline", "tab\there\n\n"}
	// Distinct, non-empty keys: bash refuses an empty subscript.
	fields := [][]string{{"a"}, {"b", "c"}, {"it's"}, {"$x"}, {"1"}, {"e"}, {"n"}, {"t"}}
	for _, c := range []struct {
		name  string
		p     *Parset
		print string // bash that prints the values, one per line, quoted by %q
	}{
		{"one name: an array", &Parset{Names: []string{"arr"}}, `for v in "${arr[@]}"; do printf '%q\n' "$v"; done`},
		{"several names", &Parset{Names: []string{"v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"}}, `for v in "$v1" "$v2" "$v3" "$v4" "$v5" "$v6" "$v7" "$v8"; do printf '%q\n' "$v"; done`},
		{"assoc", &Parset{Assoc: true, Names: []string{"h"}}, ""}, // printed below, by key
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString(c.p.Header())
			for i, out := range outs {
				b.WriteString(c.p.Value(int64(i+1), fields[i], []byte(out)))
			}
			b.WriteString(c.p.Footer(0))
			script := "f() {\n" + b.String() + "\n}\nf\n" + c.print
			want := make([]string, len(outs))
			for i, out := range outs {
				want[i] = strings.TrimSuffix(out, "\n")
			}
			if c.p.Assoc {
				// bash evals the assignment in the function; declare the
				// array global first, then print it in the fields' order.
				script = "declare -A h\nf() {\n" + b.String() + "\n}\nf\n"
				for _, f := range fields {
					script += `printf '%q\n' "${h[` + shellQuoteForTest(strings.Join(f, " ")) + `]}"` + "\n"
				}
			}
			cmd := exec.Command("bash", "-c", script)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			got, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Fatalf("bash: %v %s\n%s", err, stderr.String(), script)
			}
			var wantQ strings.Builder
			for _, w := range want {
				q, err := exec.Command("bash", "-c", `printf '%q\n' "$1"`, "_", w).Output()
				if err != nil {
					t.Fatal(err)
				}
				wantQ.Write(q)
			}
			if string(got) != wantQ.String() {
				t.Errorf("eval'ed values:\n%s\nwant:\n%s\nscript:\n%s", got, wantQ.String(), script)
			}
			if c.p.Unnamed() != 0 {
				t.Errorf("Unnamed = %d, want 0", c.p.Unnamed())
			}
		})
	}
}

func shellQuoteForTest(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// TestParsetTooFewNames: jobs beyond several names get no variable and
// are counted, as GNU parallel's parset calls an error.
func TestParsetTooFewNames(t *testing.T) {
	p := &Parset{Names: []string{"a", "b"}}
	var b strings.Builder
	for i := range 3 {
		b.WriteString(p.Value(int64(i+1), nil, []byte("x\n")))
	}
	if got, want := b.String(), "a=x\nb=x\n"; got != want || p.Unnamed() != 1 {
		t.Errorf("values %q, Unnamed %d; want %q, 1", got, p.Unnamed(), want)
	}
	if got, want := p.Header()+p.Footer(255), "\nreturn 255"; got != want {
		t.Errorf("header and footer %q, want %q", got, want)
	}
}
