package gnuinput_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/runner/input"
)

func seqArgs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i + 1)
	}
	return out
}

// productPeak streams ::: 1..first ::: 1..second through Open, Batches
// and the template, as --dry-run does, and returns the combinations seen
// and the peak live heap, sampled 100 times, evenly, after a forced GC so
// that garbage not yet collected does not count (the same number of
// samples at every size, so that the peaks compare).
func productPeak(tb testing.TB, first, second int) (int, uint64) {
	in, err := gnuinput.Open([]gnuinput.Source{
		{Name: ":::", Values: input.Args(seqArgs(first))},
		{Name: ":::", Values: input.Args(seqArgs(second))},
	}, gnuinput.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	tmpl, err := template.Parse([]string{"echo", "{1}", "{2}"}, false)
	if err != nil {
		tb.Fatal(err)
	}
	var ms runtime.MemStats
	var peak uint64
	count := 0
	for b, err := range gnuinput.Batches(in.All(), gnuinput.BatchOptions{}) {
		if err != nil {
			tb.Fatal(err)
		}
		_ = tmpl.DisplayFields(b.Fields(), b.Seq, 1)
		count++
		if count%max(first*second/100, 1) == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	return count, peak
}

// TestProductMemoryFlat: the product is streamed, never materialised, so
// 10^6 combinations take no more live memory than 10^4 over the same
// later source (the later sources are held whole: their size counts, the
// number of combinations must not). Sources of 10 and 1000 values against
// 1000 and 1000: only the lazily read first source and the count differ.
// (The binary's peak RSS at 10^4 and 10^6 is measured by
// bench/scripts, not here: a unit test keeps no time or size budget.)
func TestProductMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 10^6 combinations")
	}
	n4, small := productPeak(t, 10, 1000)
	n6, big := productPeak(t, 1000, 1000)
	if n4 != 10_000 || n6 != 1_000_000 {
		t.Fatalf("combinations: %d and %d", n4, n6)
	}
	t.Logf("peak live heap: %d B at 10^4, %d B at 10^6 (%.2fx)", small, big, float64(big)/float64(small))
	if float64(big) > 1.5*float64(small) {
		t.Errorf("peak live heap %d B at 10^6 combinations > 1.5 x %d B at 10^4", big, small)
	}
}

func BenchmarkProduct(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("combinations=%d", n*n), func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				_, peak = productPeak(b, n, n)
			}
			b.ReportMetric(float64(peak), "peak-heap-B")
		})
	}
}

// TestXargsLikeGNU is the acceptance item at library level: -X
// over 100,000 file names makes as many command lines as GNU parallel
// (within one) holding the same arguments.
func TestXargsLikeGNU(t *testing.T) {
	if testing.Short() {
		t.Skip("runs GNU parallel over 100,000 arguments")
	}
	if _, err := exec.LookPath("parallel"); err != nil {
		t.Skip("GNU parallel is not installed")
	}
	names := make([]string, 100_000)
	for i := range names {
		names[i] = fmt.Sprintf("src/pkg%03d/file_%06d.go", i%997, i)
	}
	cmd := exec.Command("parallel", "--will-cite", "-k", "-j2", "-X", "--dry-run", "gofmt", "-l")
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	gnuLines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	var gnuArgs []string
	for _, l := range gnuLines {
		gnuArgs = append(gnuArgs, strings.Fields(strings.TrimPrefix(l, "gofmt -l "))...)
	}

	tmpl, err := template.ParseOptions([]string{"gofmt", "-l"}, template.Options{Context: true})
	if err != nil {
		t.Fatal(err)
	}
	in, err := gnuinput.Open([]gnuinput.Source{{Name: "stdin", Values: gnuinput.Split(bytes.NewReader([]byte(strings.Join(names, "\n"))), gnuinput.SplitOptions{})}}, gnuinput.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lines int
	var args []string
	for b, err := range gnuinput.Batches(in.All(), gnuinput.BatchOptions{MaxChars: gnuinput.DefaultMaxChars(), Measure: tmpl.Measurer(), Spread: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		lines++
		argv := tmpl.ExpandFields(b.Fields(), b.Seq, 1)
		args = append(args, argv[2:]...)
		if l := len(tmpl.DisplayFields(b.Fields(), b.Seq, 1)); l >= gnuinput.DefaultMaxChars() {
			t.Errorf("line %d is %d bytes, not below %d", b.Seq, l, gnuinput.DefaultMaxChars())
		}
	}
	t.Logf("GNU parallel: %d lines, ration: %d lines, %d arguments", len(gnuLines), lines, len(args))
	if d := lines - len(gnuLines); d < -1 || d > 1 {
		t.Errorf("%d command lines, GNU parallel %d", lines, len(gnuLines))
	}
	if strings.Join(args, " ") != strings.Join(gnuArgs, " ") {
		t.Errorf("the arguments differ from GNU parallel's (%d vs %d)", len(args), len(gnuArgs))
	}
}
