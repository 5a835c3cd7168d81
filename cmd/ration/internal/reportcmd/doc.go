// Package reportcmd is `ration report`: it draws a joblog as an HTML page
// or an SVG image (package internal/report) against the CPU budget.
//
// It imports internal/report, limits and cmd/ration/internal/cli; it must
// not import another command's package.
package reportcmd
