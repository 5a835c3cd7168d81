// Package archtest holds the test that checks the module's import rules:
// the ones each package's doc states (what it must not import), read from
// `go list -deps -json` and so from the code, not from a drawing. A rule
// broken by a new import fails `go test ./internal/archtest` with the
// package, the import and the rule.
//
// It has no code of its own and imports nothing of the module.
package archtest
