# ration's build. `make test` is what CI runs (.ci/run) and what README shows.

GO      ?= go
# Every Go module in the repository: the library at the root, and the modules
# that keep heavy dependencies out of it (bench/, charts/).
MODULES := $(sort $(patsubst %/go.mod,%,$(shell find . -name go.mod -not -path './.git/*' -not -path '*/testdata/*')))
GOTEST_FLAGS ?= -race -timeout 30m

.PHONY: all build test vet bench clean

all: build

build:
	$(GO) build -o bin/ration ./cmd/ration

vet:
	@set -e; for m in $(MODULES); do echo "== go vet $$m"; (cd $$m && $(GO) vet ./...); done

# go test runs each fuzz target's seed corpus (f.Add and testdata/fuzz) too.
test: vet
	@set -e; for m in $(MODULES); do echo "== go test $$m"; (cd $$m && $(GO) test $(GOTEST_FLAGS) ./...); done

bench:
	@$(MAKE) -C bench bench

clean:
	rm -rf bin
