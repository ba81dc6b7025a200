# upcheck — `make run` starts the app, `make test` runs every test.
SHELL := /bin/bash
GO    ?= go
BIN   := bin/upcheck
PKGS  := ./...
# The generators and the linter are pinned in tools/go.mod, a module of their
# own, so that their dependencies stay out of the product's go.mod.
TOOL  := $(GO) tool -modfile=tools/go.mod

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

.PHONY: build
build: ## build bin/upcheck
	$(GO) build -o $(BIN) ./cmd/upcheck

.PHONY: run
run: build ## run the app (a private PostgreSQL is started when UPCHECK_DATABASE_URL is unset)
	./$(BIN) serve --demo

.PHONY: cluster
cluster: build deps ## three instances behind nginx with TLS on https://127.0.0.1:8443, as docs/deploy.md sets them up; Ctrl-C stops them
	$(GO) build -o bin/upcheck-cluster ./cmd/upcheck-cluster
	./bin/upcheck-cluster -binary $(BIN)

.PHONY: test
# Two passes. First every package but the timing-sensitive ones, two at a
# time (tests within a package run in parallel too), the longest first
# (FIRST), so that none of them is left running alone at the end. Then the
# timing-sensitive ones, in two steps. ALONE runs alone, one package at a
# time (-p 1): the lease tests measure timings in fractions of a second;
# updatecheck's run an in-process lease of 2 s, expect a check to stop
# within 3 s of a takeover and a sync to hold the lease's lock for under
# half a second. Then BESIDE, one package at a time, beside FAULTS: crashtest
# kills the real binary at chosen moments and cluster runs three instances
# behind nginx and a standby, with bounds of seconds; the fault workload
# (three instances under faults for 60 s, its control and its checker's
# self-test side by side, -parallel 3) mostly waits and asks nothing of
# the clock but convergence within 30 s and delivery within 90 s. FAULTS'
# output follows BESIDE's.
# Tag crash adds the crash, cluster and failover suites, tag faults the
# fault workload (docs/reliability.md). go vet ran in lint, so go test's
# own vet pass is off. Every run reports its failures before the target
# fails.
FIRST        := internal/web internal/testing/npme2e cmd/upcheck internal/catalog internal/app
ALONE        := internal/lease internal/updatecheck
BESIDE       := internal/testing/crashtest internal/testing/cluster
FAULTS       := internal/testing/faulttest
TEST_TAGS    := crash,faults
TEST_FLAGS    = -race -count=1 -vet=off -tags $(TEST_TAGS) -timeout 30m
# Computed once, when the test target first asks (not for other targets).
module        = $(eval module := $(shell $(GO) list -m))$(module)
test_all      = $(eval test_all := $(shell $(GO) list -tags $(TEST_TAGS) $(PKGS)))$(test_all)
test_pkgs     = $(foreach p,$(1),$(filter $(module)/$(p),$(test_all)))
test_alone    = $(call test_pkgs,$(ALONE))
test_beside   = $(call test_pkgs,$(BESIDE))
test_faults   = $(call test_pkgs,$(FAULTS))
test_first    = $(call test_pkgs,$(FIRST))
test_parallel = $(test_first) $(filter-out $(test_first) $(test_alone) $(test_beside) $(test_faults),$(test_all))
test: lint deps ## run every test, with the race detector, on real PostgreSQL and Chromium
	@status=0; faults=$$(mktemp); fpid=; \
	if [ -n "$(strip $(test_parallel))" ]; then $(GO) test $(TEST_FLAGS) $(test_parallel) || status=1; fi; \
	if [ -n "$(strip $(test_alone))" ]; then $(GO) test $(TEST_FLAGS) -p 1 $(test_alone) || status=1; fi; \
	if [ -n "$(strip $(test_faults))" ]; then $(GO) test $(TEST_FLAGS) -parallel 3 $(test_faults) >$$faults 2>&1 & fpid=$$!; fi; \
	if [ -n "$(strip $(test_beside))" ]; then $(GO) test $(TEST_FLAGS) -p 1 $(test_beside) || status=1; fi; \
	if [ -n "$$fpid" ]; then wait $$fpid || status=1; cat $$faults; fi; \
	rm -f $$faults; exit $$status

.PHONY: soak
soak: deps ## the fault workload for 10 minutes: five 2-minute runs, each with a random seed (printed; rerun one with UPCHECK_FAULT_SEED)
	UPCHECK_FAULT_SEED=random UPCHECK_FAULT_DURATION=2m $(GO) test -count=5 -tags faults -timeout 40m -v -run 'TestFaults$$' ./internal/testing/faulttest/

.PHONY: stop
stop: ## stop the private PostgreSQL clusters that run, test and bench leave running (data is kept)
	$(GO) run ./cmd/devdb stop

.PHONY: deps
deps: ## install PostgreSQL, Chromium, nginx, systemd-analyze, Node and npm from Debian's packages when missing, and the test registry (Verdaccio) from npm
	@bash .ci/deps

.PHONY: bench
# Part 12, the fleet (-only fleet), runs after the others, on a database of
# its own: FLEET_SITES=1000 for a smaller fleet (10,000 need some 10 GiB).
FLEET_SITES ?= 10000
bench: build ## measure check throughput, fencing cost, summary and pages under load, lease ops, then a fleet of 10,000 sites
	$(GO) run ./cmd/upcheck-bench -binary $(BIN)
	$(GO) run ./cmd/upcheck-bench -binary $(BIN) -only fleet -fleet-sites $(FLEET_SITES)

.PHONY: generate
generate: ## regenerate sqlc and templ code
	$(TOOL) sqlc generate
	$(TOOL) templ generate

.PHONY: verify
verify: generate ## fail when generated code is stale or a go.mod is not tidy
	@git diff --exit-code -- internal/db views || { echo "generated code is stale: run make generate and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- internal/db views)" || { git status --porcelain -- internal/db views; echo "untracked generated files"; exit 1; }
	@$(GO) mod tidy -diff || { echo "go.mod is not tidy: run go mod tidy"; exit 1; }
	@$(GO) -C tools mod tidy -diff || { echo "tools/go.mod is not tidy: run go -C tools mod tidy"; exit 1; }

.PHONY: lint
lint: ## gofmt, go vet and staticcheck (pinned in tools/go.mod)
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ.go$$') $$(git ls-files --others --exclude-standard '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags crash,faults $(PKGS)
	$(GO) vet -tags faultcontrol ./internal/lease/
	$(TOOL) staticcheck -tags crash,faults $(PKGS)
