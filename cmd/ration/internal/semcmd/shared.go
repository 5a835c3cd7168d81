package semcmd

import (
	"io"
	"os"

	"github.com/ration-run/ration/cmd/ration/internal/cli"
)

// The names this package's files use for what ration's commands share
// (package cli).

const exitUsage = cli.ExitUsage

type signalHub = cli.SignalHub

func flagErr(name string, err error) error             { return cli.FlagErr(name, err) }
func flagMsg(name, msg string) error                   { return cli.FlagMsg(name, msg) }
func fail(stderr io.Writer, cmd string, err error) int { return cli.Fail(stderr, cmd, err) }
func parentShell(getenv func(string) string) string    { return cli.ParentShell(getenv) }
func isStopSignal(s os.Signal) bool                    { return cli.IsStopSignal(s) }
func isQuitSignal(s os.Signal) bool                    { return cli.IsQuitSignal(s) }
