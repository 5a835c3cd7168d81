# syntax=docker/dockerfile:1
#
# The ration image: one static binary on a distroless base, run as PID 1.
#
#   docker build -t ration .
#   docker run --rm --cpus 2 --memory 1g ration limits
#
# charts/dockerfile_test.go checks the parts that matter at run time (static
# build, base image, non-root user, exec-form ENTRYPOINT), since CI has no
# container engine to build it.

ARG GO_VERSION=1.26

# Build on the builder's own platform and cross-compile: a pure-Go binary
# needs no emulation for other architectures.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
# No cgo: the binary must run on distroless/static, which has no libc.
ENV CGO_ENABLED=0
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags="-s -w" -o /out/ration ./cmd/ration

# distroless static: no shell, no package manager, CA certificates and
# /etc/passwd only. The nonroot variant defaults to UID/GID 65532, which the
# Helm chart's restricted securityContext expects.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ration /ration
USER 65532:65532
# Exec form: ration itself is PID 1, so it receives the pod's SIGTERM
# directly (a shell in between would not forward it) and reaps the orphans
# its jobs leave behind (internal/reaper).
ENTRYPOINT ["/ration"]
CMD ["--help"]
