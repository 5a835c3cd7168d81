package runcmd

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// runHelp returns the flags part of `ration run --help`.
func runHelp(t *testing.T) string {
	t.Helper()
	var f runFlags
	var b bytes.Buffer
	if err := printRunHelp(&b, newRunFlagSet(&f)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRunHelpGroupsEveryFlag: `ration run --help` lists every flag once,
// in a group by purpose, its other names ("same as --X") on its line;
// every placeholder names what the flag takes (never a Go type such as
// `string`, nor pflag's `count[=true]`), no zero default is printed, and
// every line fits 80 columns.
func TestRunHelpGroupsEveryFlag(t *testing.T) {
	var f runFlags
	fs := newRunFlagSet(&f)
	listed := map[string]string{}
	for _, g := range helpGroups() {
		for _, name := range g.flags {
			if prev, ok := listed[name]; ok {
				t.Errorf("--%s is listed under %q and %q", name, prev, g.title)
			}
			listed[name] = g.title
			fl := fs.Lookup(name)
			switch {
			case fl == nil:
				t.Errorf("%q lists --%s, which ration run does not have", g.title, name)
			case aliasOf(fl) != "":
				t.Errorf("%q lists --%s, which is another name of --%s", g.title, name, aliasOf(fl))
			}
		}
	}
	fs.VisitAll(func(fl *pflag.Flag) {
		name := fl.Name
		if to := aliasOf(fl); to != "" {
			name = to
		}
		if _, ok := listed[name]; !ok && !fl.Hidden {
			t.Errorf("--%s is in no group of `ration run --help` (helpGroups)", fl.Name)
		}
	})
	help := runHelp(t)
	typeName := regexp.MustCompile(`(?m)^  (?:-\w, |    )--[\w-]+(?:, -?-[\w-]+)* (string|int|int64|uint|float64|float|bool|count|duration|stringArray|strings|ints|size)\b`)
	for _, m := range typeName.FindAllString(help, -1) {
		t.Errorf("placeholder is a Go type: %q", m)
	}
	for _, bad := range []string{"[=", "(default 0)", "(default \"", "(default false)"} {
		if strings.Contains(help, bad) {
			t.Errorf("help holds %q", bad)
		}
	}
	for _, l := range strings.Split(help, "\n") {
		if len(l) > helpWidth {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
}

// TestRunHelpFoldsAliases: GNU parallel's other names of a flag are on
// the flag's line, not entries of their own.
func TestRunHelpFoldsAliases(t *testing.T) {
	help := runHelp(t)
	for _, want := range []string{
		"-j, --jobs, -P, --max-procs N",
		"--link, --xapply",
		"--results, --res DIR",
		"--bar, --eta, --progress",
		"--block, --block-size SIZE",
		"--dry-run, --dryrun",
	} {
		if !strings.Contains(help, "  "+want+" ") && !strings.Contains(help, "  "+want+"\n") {
			t.Errorf("help has no line starting %q", want)
		}
	}
	if strings.Contains(help, "same as --") {
		t.Errorf("help still has an entry \"same as --\":\n%s", help)
	}
}
