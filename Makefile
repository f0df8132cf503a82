# suitegen — `make help` lists the targets.
#
# Tools (staticcheck, buf, protoc-gen-go, nats-server) come from the Go module proxy at
# pinned versions into ./bin; the system packages tests need (prometheus,
# chromium) are installed by scripts that do nothing when they are present.

SHELL          := /bin/bash
GO             ?= go
BIN            := $(CURDIR)/bin
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK    := $(BIN)/staticcheck-$(STATICCHECK_VERSION)/staticcheck
# Every package: ./... and the converter of the test contract ported from
# tau-bench's retail data (a testdata folder, which ./... leaves out).
PKGS           := ./... ./testdata/contracts/tau-retail/convert/
RUN_ARGS       ?= examples/retail --scenarios 50 --writers 4
# One test binary may take this long: the end-to-end package runs whole
# suites under -race and must still pass when the cores are busy.
TEST_TIMEOUT   ?= 60m
BENCH_TIME     ?= 1x

.DEFAULT_GOAL := help
.PHONY: help run test test-go test-faults test-cluster lint vet staticcheck bench build verify deps tools clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

run: ## write a 50-scenario suite for examples/retail end to end on the embedded stack (out/shop-support)
	$(GO) build -o $(BIN)/suitegen ./cmd/suitegen
	exec $(BIN)/suitegen run $(RUN_ARGS)

build: ## build every binary into ./bin
	$(GO) build -o $(BIN)/ ./cmd/...

test: deps lint test-go ## lint, then the whole test suite: -race, and the tests marked OutsideRace without it, at once (starts every service it needs)

# Two passes at once: every package under the race detector, where a test
# marked testenv.OutsideRace skips (its code runs in other processes, or is
# CPU-bound work on whole contracts the race pass runs on small ones), and
# those marked tests alone without it (scripts/outsiderace lists them).
#
# The two passes' binaries, all built from this tree, share one plan cache
# (SUITEGEN_PLAN_CACHE, named for this tree by SUITEGEN_PLAN_CACHE_BUILD):
# a contract is derived once per option set, not once per test, and tests
# that start together wait for the one deriving it. pkg/plan's tests of how
# Derive works call it without the cache.
test-go:
	@set -o pipefail; args="$$($(GO) run ./scripts/outsiderace)" || exit 1; \
	cache="$$(mktemp -d)"; trap 'rm -rf "$$cache"' EXIT; \
	export SUITEGEN_PLAN_CACHE="$$cache" SUITEGEN_PLAN_CACHE_BUILD="make test $$cache"; \
	SUITEGEN_TEST_PASS=race $(GO) test -race -timeout $(TEST_TIMEOUT) -count=1 $(PKGS) 2>&1 | sed -u 's/^/race   /' & race=$$!; \
	$(GO) test -timeout $(TEST_TIMEOUT) -count=1 $$args 2>&1 | sed -u 's/^/norace /' & whole=$$!; \
	wait $$race; r=$$?; wait $$whole; w=$$?; \
	echo "race pass exit $$r, pass without the race detector exit $$w"; exit $$(( r | w ))

test-faults: ## the fault suite at full size (kills, restarts, injected provider faults)
	SUITEGEN_FAULTS=full $(GO) test -race -timeout 60m -count=1 -run 'Fault' -v ./pkg/e2e/...

# nats-server at the version go.mod pins, for the cluster test's real servers.
NATS_SERVER    := $(BIN)/nats-server

test-cluster: $(NATS_SERVER) ## 300 scenarios on a 3-node JetStream cluster and a PostgreSQL primary + standby, with a leader kill, a failover, a writer cut off and one killed
	SUITEGEN_CLUSTER=1 SUITEGEN_NATS_SERVER=$(NATS_SERVER) $(GO) test -timeout 60m -count=1 -run 'TestCluster$$' -v ./pkg/e2e/

$(NATS_SERVER): go.mod
	$(GO) build -o $@ github.com/nats-io/nats-server/v2

lint: vet staticcheck ## go vet and staticcheck

vet:
	$(GO) vet $(PKGS)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) $(PKGS)

$(STATICCHECK):
	GOBIN=$(dir $@) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

bench: ## benchmarks, the quota targets and the quota matrix (hours; figures in docs/BENCHMARKS.md)
	SUITEGEN_BENCH=1 $(GO) test -run '^$$' -bench . -benchtime $(BENCH_TIME) -benchmem -timeout 90m ./pkg/...
	SUITEGEN_BENCH=1 $(GO) test -run 'TestQuotaTargets' -v -count=1 -timeout 60m ./pkg/e2e/
	SUITEGEN_BENCH=1 $(GO) test -run 'TestQuotaMatrix' -v -count=1 -timeout 3h ./pkg/e2e/

deps: ## install the system packages tests use when absent (prometheus, chromium)
	@bash deploy/install-prometheus.sh
	@bash scripts/install-chromium.sh

verify: proto-verify ## fail if generated code is stale
	$(GO) mod tidy -diff

clean: ## remove build outputs and suites
	rm -rf $(BIN) out

include proto.mk
