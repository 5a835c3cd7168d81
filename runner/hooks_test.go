package runner

import (
	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/internal/template"
)

// hookDialect is a dialect that installs the hooks h as they are, for
// tests of the engine's extension points.
type hookDialect struct{ h runhook.Hooks }

func (d hookDialect) Check(runhook.Settings) error                  { return nil }
func (d hookDialect) TemplateOptions() template.Options             { return template.Options{} }
func (d hookDialect) Install(runhook.Engine) (runhook.Hooks, error) { return d.h, nil }
