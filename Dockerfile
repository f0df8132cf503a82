# syntax=docker/dockerfile:1
# suitegen: one image, one binary. /usr/local/bin/suitegen is the all-in-one CLI; planner,
# writer and reviewer are links to it (it runs the role its name says), which the Kubernetes
# manifests in deploy/k8s run. deploy/deploy_test.go checks the links cover cmd/* and that
# USER is not root. VERSION is what --version and suitegen_build_info report.

FROM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so a source change does not refetch modules.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
RUN go build -trimpath -ldflags "-s -w -X github.com/suitegen/suitegen/pkg/cli.version=${VERSION}" \
      -o /out/suitegen ./cmd/suitegen && \
    ln -s suitegen /out/planner && \
    ln -s suitegen /out/writer && \
    ln -s suitegen /out/reviewer

# Static binaries need no libc; distroless/static has CA certificates (for the model
# provider's TLS) and tzdata, and no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
# The nonroot user of distroless images; numeric so runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/suitegen"]
