package charts

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// The final image's properties that the chart and internal/reaper rely on.
const (
	wantBase       = "gcr.io/distroless/static-debian12:nonroot"
	wantUser       = "65532:65532"
	wantEntrypoint = "/ration"
)

// checkDockerfile parses src with BuildKit's own parser and returns every
// way it departs from what the image must be: a static CGO_ENABLED=0 build
// of ./cmd/ration copied onto the distroless nonroot base, running as
// 65532:65532 with ration itself as PID 1 (exec-form ENTRYPOINT).
func checkDockerfile(src []byte) []error {
	res, err := parser.Parse(bytes.NewReader(src))
	if err != nil {
		return []error{fmt.Errorf("parse: %w", err)}
	}
	stages, _, err := instructions.Parse(res.AST, nil)
	if err != nil {
		return []error{fmt.Errorf("instructions: %w", err)}
	}
	if len(stages) < 2 {
		return []error{fmt.Errorf("%d stage(s), want a multi-stage build", len(stages))}
	}
	var errs []error
	final := stages[len(stages)-1]
	if final.BaseName != wantBase {
		errs = append(errs, fmt.Errorf("final base image %q, want %q", final.BaseName, wantBase))
	}
	var user, entry string
	var copyFrom string
	var entryShell bool
	for _, cmd := range final.Commands {
		switch c := cmd.(type) {
		case *instructions.UserCommand:
			user = c.User
		case *instructions.EntrypointCommand:
			entry, entryShell = strings.Join(c.CmdLine, " "), c.PrependShell
			if len(c.CmdLine) != 1 {
				errs = append(errs, fmt.Errorf("ENTRYPOINT %q, want just [%q]", c.CmdLine, wantEntrypoint))
			}
		case *instructions.CopyCommand:
			if slices.Contains(c.SourcePaths, "/out/ration") && c.DestPath == wantEntrypoint {
				copyFrom = c.From
			}
		case *instructions.RunCommand:
			errs = append(errs, fmt.Errorf("RUN %q in the final stage: distroless has no shell", c.CmdLine))
		}
	}
	if user != wantUser {
		errs = append(errs, fmt.Errorf("final USER %q, want %q", user, wantUser))
	}
	if entry != wantEntrypoint || entryShell {
		errs = append(errs, fmt.Errorf("ENTRYPOINT %q (shell form %v), want exec form [%q]", entry, entryShell, wantEntrypoint))
	}
	if copyFrom == "" {
		return append(errs, fmt.Errorf("final stage does not COPY --from=<stage> /out/ration %s", wantEntrypoint))
	}
	var build *instructions.Stage
	for i := range stages[:len(stages)-1] {
		if stages[i].Name == strings.ToLower(copyFrom) {
			build = &stages[i]
		}
	}
	if build == nil {
		return append(errs, fmt.Errorf("COPY --from=%s: no such stage", copyFrom))
	}
	cgoOff, built := false, false
	for _, cmd := range build.Commands {
		switch c := cmd.(type) {
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				if kv.Key == "CGO_ENABLED" {
					cgoOff = kv.Value == "0"
				}
			}
		case *instructions.RunCommand:
			line := strings.Join(c.CmdLine, " ")
			if strings.Contains(line, "CGO_ENABLED=0") {
				cgoOff = true
			}
			if strings.Contains(line, "CGO_ENABLED=1") {
				cgoOff = false
			}
			if strings.Contains(line, "go build") && strings.Contains(line, "-o /out/ration") && strings.Contains(line, "./cmd/ration") {
				built = true
			}
		}
	}
	if !cgoOff {
		errs = append(errs, fmt.Errorf("stage %q does not set CGO_ENABLED=0: the binary would need libc, which distroless/static lacks", build.Name))
	}
	if !built {
		errs = append(errs, fmt.Errorf("stage %q has no `go build ... -o /out/ration ./cmd/ration`", build.Name))
	}
	return errs
}

func readDockerfile(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDockerfile(t *testing.T) {
	for _, err := range checkDockerfile(readDockerfile(t)) {
		t.Error(err)
	}
}

// TestDockerfileCheckFails feeds broken variants of the real Dockerfile to
// the checker, so that TestDockerfile can fail.
func TestDockerfileCheckFails(t *testing.T) {
	good := string(readDockerfile(t))
	for _, tc := range []struct{ name, old, new, want string }{
		{"shell-form entrypoint", `ENTRYPOINT ["/ration"]`, `ENTRYPOINT /ration`, "exec form"},
		{"root user", "USER 65532:65532", "USER root", "final USER"},
		{"no user", "USER 65532:65532\n", "", "final USER"},
		{"cgo on", "ENV CGO_ENABLED=0", "ENV CGO_ENABLED=1", "CGO_ENABLED=0"},
		{"other base", wantBase, "debian:12-slim", "final base image"},
		{"entrypoint through a shell", `ENTRYPOINT ["/ration"]`, `ENTRYPOINT ["sh", "-c", "/ration"]`, "ENTRYPOINT"},
		{"single stage", "COPY --from=build /out/ration /ration", "COPY --from=nope /out/ration /ration", "no such stage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("Dockerfile no longer contains %q; update the test", tc.old)
			}
			errs := checkDockerfile([]byte(strings.Replace(good, tc.old, tc.new, 1)))
			if !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), tc.want) }) {
				t.Errorf("errors %v, want one mentioning %q", errs, tc.want)
			}
		})
	}
}

// TestDockerignoreKeepsSources checks that .dockerignore does not drop what
// the build stage needs.
func TestDockerignoreKeepsSources(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		p := strings.TrimSpace(line)
		if p == "" || strings.HasPrefix(p, "#") || strings.HasPrefix(p, "!") {
			continue
		}
		for _, needed := range []string{"go.mod", "go.sum", "cmd", "*.go", "**/*.go", "*", "/", "."} {
			if strings.TrimPrefix(p, "/") == strings.TrimPrefix(needed, "/") {
				t.Errorf(".dockerignore excludes %q, which the build needs", p)
			}
		}
	}
}
