package reportcmd

import (
	"io"

	"github.com/ration-run/ration/cmd/ration/internal/cli"
)

// The names this package's files use for what ration's commands share
// (package cli).

const exitUsage = cli.ExitUsage

func fail(stderr io.Writer, cmd string, err error) int { return cli.Fail(stderr, cmd, err) }
func oneLine(s string) string                          { return cli.OneLine(s) }
