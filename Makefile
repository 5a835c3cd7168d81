# ration's build. `make test` is what CI runs (.ci/run) and what README shows:
# the hygiene checks (vet, tidy-check, crossbuild, lint), then the tests.

GO      ?= go
# Every Go module in the repository: the library at the root, and the modules
# that keep heavy dependencies out of it (bench/, charts/).
MODULES := $(sort $(patsubst %/go.mod,%,$(shell find . -name go.mod -not -path './.git/*' -not -path '*/testdata/*')))
GOTEST_FLAGS ?= -race -timeout 30m

# Linters, pinned, installed from the Go module proxy into bin/tools/VERSION/
# (bin/ is ignored by git; `make clean` removes them).
STATICCHECK_VERSION := v0.8.2
GOCYCLO_VERSION     := v0.6.0
TOOLS       := $(CURDIR)/bin/tools
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)/staticcheck
GOCYCLO     := $(TOOLS)/gocyclo-$(GOCYCLO_VERSION)/gocyclo
# The issue-12 budget for the root module's non-test code.
MAX_CYCLO := 25
MAX_LINES := 600

.PHONY: all install build test test-v2 vet tidy-check crossbuild lint api bench clean

all: build

install:
	$(GO) install ./cmd/ration

build:
	$(GO) build -o bin/ration ./cmd/ration

vet:
	@set -e; for m in $(MODULES); do echo "== go vet $$m"; (cd $$m && $(GO) vet ./...); done

# go.mod and go.sum of every module are exactly what `go mod tidy` writes
# (direct dependencies not marked indirect, nothing unused), and the binary
# does not link go.uber.org/automaxprocs: it is a test-only dependency, and
# linking it would switch off the Go runtime's own GOMAXPROCS updates (see
# package limits).
tidy-check:
	@set -e; for m in $(MODULES); do echo "== go mod tidy -diff $$m"; (cd $$m && $(GO) mod tidy -diff); done
	@echo "== ration does not link go.uber.org/automaxprocs"
	@if $(GO) list -deps ./cmd/ration | grep '^go\.uber\.org/automaxprocs'; then \
		echo "cmd/ration links go.uber.org/automaxprocs (see the limits package doc)"; exit 1; fi

# The library builds and vets on the OSes without cgroups: everything on
# macOS, and on Windows the in-process pool, `ration report` and the CLI.
# What is Linux-only, and why, is in each package's doc.
CROSS_WINDOWS := ./pool/... ./internal/report/... ./cmd/ration/...
crossbuild:
	@echo "== GOOS=darwin go build/vet ./..."
	@GOOS=darwin $(GO) build ./... && GOOS=darwin $(GO) vet ./...
	@echo "== GOOS=windows go build/vet $(CROSS_WINDOWS)"
	@GOOS=windows $(GO) build $(CROSS_WINDOWS) && GOOS=windows $(GO) vet $(CROSS_WINDOWS)

$(STATICCHECK):
	GOBIN=$(dir $@) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

$(GOCYCLO):
	GOBIN=$(dir $@) $(GO) install github.com/fzipp/gocyclo/cmd/gocyclo@$(GOCYCLO_VERSION)

# staticcheck over every module; over the root module's non-test files, no
# function above MAX_CYCLO (gocyclo) and no file above MAX_LINES lines. Every
# check runs and reports before the target fails.
lint: $(STATICCHECK) $(GOCYCLO)
	@fail=0; \
	for m in $(MODULES); do echo "== staticcheck $$m"; (cd $$m && $(STATICCHECK) ./...) || fail=1; done; \
	echo "== gocyclo -over $(MAX_CYCLO) (root module, tests excluded)"; \
	out=$$($(GOCYCLO) -over $(MAX_CYCLO) -ignore '_test\.go$$|^(bench|charts)/|/testdata/' .); \
	if [ -n "$$out" ]; then echo "$$out"; fail=1; fi; \
	echo "== no non-test file over $(MAX_LINES) lines (root module)"; \
	out=$$(find . -name '*.go' ! -name '*_test.go' -not -path './bench/*' -not -path './charts/*' -not -path '*/testdata/*' \
		-exec awk 'END { if (NR > $(MAX_LINES)) print FILENAME ": " NR " lines" }' {} \;); \
	if [ -n "$$out" ]; then echo "$$out"; fail=1; fi; \
	exit $$fail

# go test runs each fuzz target's seed corpus (f.Add and testdata/fuzz) too.
# The modules' tests run at the same time (the root module's end-to-end tests
# mostly wait on processes), each into its own log, printed in order.
test: vet tidy-check crossbuild lint
	@logs=$$(mktemp -d); trap 'rm -rf $$logs' EXIT; i=0; \
	for m in $(MODULES); do i=$$((i+1)); (cd $$m && $(GO) test $(GOTEST_FLAGS) ./... >$$logs/$$i 2>&1; echo $$? >$$logs/$$i.rc) & done; \
	wait; fail=0; i=0; \
	for m in $(MODULES); do i=$$((i+1)); echo "== go test $$m"; cat $$logs/$$i; [ "$$(cat $$logs/$$i.rc)" = 0 ] || fail=1; done; \
	echo "== go test ./pool without the race detector (tests that depend on task timings)"; \
	$(GO) test -run 'TestMapShortTasksWindow|TestOrderedSlowHead' ./pool || fail=1; \
	exit $$fail

# The public API's size: public packages and their exported functions,
# types and methods (internal/apicount says what counts); it fails above
# the budget of 8 packages and 200 identifiers.
api:
	$(GO) run ./internal/apicount -max-packages 8 -max-exported 200

# The cgroup v2 lane (test/v2lane/README.md): Debian's kernel under QEMU
# runs every test that uses a real cgroup and the pod scenarios; as root.
# `make test-v2 RUN=TestX` runs only the tests -test.run TestX matches.
test-v2:
	RUN='$(RUN)' test/v2lane/lane.sh

bench:
	@$(MAKE) -C bench bench

clean:
	rm -rf bin
