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
# One package at a time (-p 1): the lease tests measure timings in fractions
# of a second, and a package that starts three instances, nginx or a standby
# beside them starves them of the two cores; tests within a package still
# run in parallel. Tag crash adds the crash, cluster and failover suites,
# tag faults the fault workload (docs/reliability.md).
test: lint deps ## run every test, with the race detector, on real PostgreSQL and Chromium
	$(GO) test -race -count=1 -p 1 -tags crash,faults -timeout 30m $(PKGS)

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
bench: build ## measure check throughput, fencing cost, summary and pages under load, lease ops
	$(GO) run ./cmd/upcheck-bench -binary $(BIN)

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
