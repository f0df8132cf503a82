# syntax=docker/dockerfile:1
# suitegen: one image with every binary. The Kubernetes manifests in deploy/k8s run
# /usr/local/bin/{planner,writer,reviewer}; /usr/local/bin/suitegen is the all-in-one CLI.
# deploy/deploy_test.go checks the binaries built here match cmd/* and that USER is not root.

FROM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so a source change does not refetch modules.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
RUN go build -trimpath -ldflags "-s -w" -o /out/ \
      ./cmd/suitegen \
      ./cmd/planner \
      ./cmd/writer \
      ./cmd/reviewer

# Static binaries need no libc; distroless/static has CA certificates (for the model
# provider's TLS) and tzdata, and no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
# The nonroot user of distroless images; numeric so runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/suitegen"]
