# proto.mk — regenerate and verify the Go generated from proto/.
# Included by the main Makefile; every name here starts with PROTO_ or proto.
#
#   make proto         regenerate proto/suitegenv1/*.pb.go (commit the result)
#   make proto-verify  lint, regenerate into a temp dir, fail if the committed Go differs
#
# Tools come from the Go module proxy at pinned versions and are kept per version
# under $(PROTO_BIN), so a version bump reinstalls and never mixes binaries.
# protoc-gen-go follows the google.golang.org/protobuf runtime pinned in go.mod,
# so the generated code always matches the runtime it links against.

PROTO_DIR          := proto
PROTO_BUF_VERSION  ?= v1.75.0
PROTO_GEN_GO_VERSION ?= $(shell go list -m -f '{{.Version}}' google.golang.org/protobuf)
PROTO_BIN          ?= $(CURDIR)/$(PROTO_DIR)/.bin
PROTO_BUF          := $(PROTO_BIN)/buf-$(PROTO_BUF_VERSION)/buf
PROTO_GEN_GO       := $(PROTO_BIN)/protoc-gen-go-$(PROTO_GEN_GO_VERSION)/protoc-gen-go
# buf finds the local plugin on PATH.
PROTO_PATH         := $(dir $(PROTO_GEN_GO)):$(PATH)

.PHONY: proto proto-verify proto-tools

proto-tools: $(PROTO_BUF) $(PROTO_GEN_GO)

$(PROTO_BUF):
	GOBIN=$(dir $@) go install github.com/bufbuild/buf/cmd/buf@$(PROTO_BUF_VERSION)

$(PROTO_GEN_GO):
	GOBIN=$(dir $@) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTO_GEN_GO_VERSION)

proto: proto-tools ## regenerate proto/suitegenv1 from the .proto files (buf, through the module proxy)
	cd $(PROTO_DIR) && PATH="$(PROTO_PATH)" $(PROTO_BUF) lint
	cd $(PROTO_DIR) && rm -f suitegenv1/*.pb.go && PATH="$(PROTO_PATH)" $(PROTO_BUF) generate

proto-verify: proto-tools ## fail if the committed generated Go differs from the .proto files
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	cd $(PROTO_DIR); \
	PATH="$(PROTO_PATH)" $(PROTO_BUF) lint; \
	PATH="$(PROTO_PATH)" $(PROTO_BUF) generate -o "$$tmp"; \
	if ! diff -r "$$tmp/suitegenv1" suitegenv1; then \
		echo "proto-verify: committed Go under $(PROTO_DIR)/suitegenv1 differs from the .proto files; run 'make proto'" >&2; \
		exit 1; \
	fi; \
	echo "proto-verify: generated Go is up to date"
