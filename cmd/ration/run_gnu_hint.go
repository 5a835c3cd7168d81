package main

import (
	"errors"
	"log/slog"
	"os/exec"
	"strings"
	"sync"

	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/runner/event"
)

// shellHint returns an observer that says once, on the first job that
// could not start because its program does not exist, that the command
// looks like shell syntax and --shell is what was meant; nil when the
// command runs through a shell or holds no shell syntax.
func shellHint(p *runPlan, say func(level slog.Level, prefix, msg string, attrs ...any)) event.Observer {
	word, ok := shellWord(p.cfg.Command)
	if p.cfg.Shell || !ok {
		return nil
	}
	var once sync.Once
	return event.Func(func(e event.Event) {
		if e.Kind != event.JobFinished || e.Err == nil || !errors.Is(e.Err, exec.ErrNotFound) {
			return
		}
		once.Do(func() {
			say(slog.LevelWarn, "ration run: ", "the command holds shell syntax ("+word+") but runs without a shell: did you mean --shell?")
		})
	})
}

// shellWord returns the word of argv that reads as shell syntax: a word
// template.ShellSyntax finds, or a word of several that holds |, >, ;,
// && or $ (GNU parallel passes a quoted pipeline to the shell as one word).
func shellWord(argv []string) (string, bool) {
	if w, ok := template.ShellSyntax(argv); ok {
		return w, true
	}
	for _, w := range argv {
		if strings.ContainsAny(w, " \t") && strings.ContainsAny(w, "|>;$&<") {
			return w, true
		}
	}
	return "", false
}
