// Package completioncmd implements `ration completion bash|zsh|fish`: a
// script that completes ration's commands and their flags, made by
// spf13/cobra from the commands' own FlagSets. The scripts ask the
// binary itself (`ration __complete ARGS`, Complete) what fits, so they
// stay right when flags change.
//
// It imports cmd/ration/internal/cli and cobra; it must not import another
// command's package.
package completioncmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ration-run/ration/cmd/ration/internal/cli"
)

// Command is one command of ration as completion sees it.
type Command struct {
	Name    string
	Summary string
	// Flags returns the command's flags; nil for none.
	Flags func() *pflag.FlagSet
}

// shells are the shells Main writes a script for.
func shells() []string { return []string{"bash", "zsh", "fish"} }

const usage = `usage: ration completion bash|zsh|fish

Print a script that completes ration's commands and flags in the shell
named. Load it in the current shell:

  bash:  source <(ration completion bash)
  zsh:   source <(ration completion zsh)
  fish:  ration completion fish | source

or save it where the shell loads completions from (bash:
/etc/bash_completion.d/ration; zsh: a file _ration in $fpath; fish:
~/.config/fish/completions/ration.fish).
`

// Main implements `ration completion SHELL`: exit 0 with the script on
// stdout, or cli.ExitUsage with one line on stderr.
func Main(cmds []Command, args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if len(args) != 1 {
		return cli.Fail(stderr, "ration completion", fmt.Errorf("want one shell: %s", strings.Join(shells(), ", ")))
	}
	root := tree(cmds)
	var err error
	switch args[0] {
	case "bash":
		err = root.GenBashCompletionV2(stdout, true)
	case "zsh":
		err = root.GenZshCompletion(stdout)
	case "fish":
		err = root.GenFishCompletion(stdout, true)
	default:
		return cli.Fail(stderr, "ration completion", fmt.Errorf("unknown shell %q: want one of %s", args[0], strings.Join(shells(), ", ")))
	}
	if err != nil {
		fmt.Fprintf(stderr, "ration completion: %v\n", err)
		return 1
	}
	return 0
}

// Complete answers the scripts' `ration __complete ARGS` (and
// __completeNoDesc): the words that may follow ARGS, as cobra's scripts
// read them, on stdout.
func Complete(cmds []Command, args []string, stdout, stderr io.Writer) int {
	root := tree(cmds)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintf(stderr, "ration %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// tree is ration's commands as a cobra command tree, for completion
// only: main dispatches the commands themselves.
func tree(cmds []Command) *cobra.Command {
	root := &cobra.Command{
		Use:               "ration",
		Short:             "run many jobs in parallel within the container's CPU and memory budget",
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	for _, c := range cmds {
		sub := &cobra.Command{
			Use:   c.Name,
			Short: c.Summary,
			Run:   func(*cobra.Command, []string) {},
		}
		if c.Flags != nil {
			fs := c.Flags()
			fs.VisitAll(func(f *pflag.Flag) {
				_, f.Usage = pflag.UnquoteUsage(f) // no `backquotes` in descriptions
			})
			sub.Flags().AddFlagSet(fs)
		}
		if c.Name == "completion" {
			sub.ValidArgs = shells()
		}
		root.AddCommand(sub)
	}
	return root
}
