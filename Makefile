# kubectl-diagnose. `make help` lists the targets.
SHELL := /usr/bin/env bash
GO ?= go
BIN ?= bin/kubectl-diagnose
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/kubediagnose/kubectl-diagnose/cmd.version=$(VERSION)
GOLANGCI_LINT_VERSION ?= v2.15.0
# cli-runtime's resource builder (under genericclioptions' ConfigFlags) imports kustomize, whose
# loader of Go plugins imports the standard library's plugin package unless this tag leaves it
# out. Linked with cgo, as `go build` links on a machine with a C compiler, that package makes
# the linker keep every exported method and symbol for plugins to find: 105 MB instead of 82,
# and up to 30 MiB more of the binary resident on every run (docs/performance.md). The release builds
# without cgo, where the linker ignores the package; it sets the tag too (.goreleaser.yaml).
# Exported, so the binaries tests and scripts build under make are this one.
GO_TAGS ?= kustomize_disable_go_plugin_support
export GOFLAGS := -tags=$(GO_TAGS) $(GOFLAGS)

.PHONY: help
help: ## show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## build bin/kubectl-diagnose
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) .

.PHONY: demo
demo: build ## open the console on the embedded demo dump
	$(BIN) --demo

.PHONY: e2e-assets
e2e-assets: ## build etcd, kube-apiserver, kube-controller-manager and kubectl into the cache (once)
	hack/e2e-assets.sh

.PHONY: test
# Packages that start processes (a control plane, tmux) run without the race detector: it slows
# them past their timing assumptions and finds nothing in code the project does not share.
SYSTEM_PKGS = /test/e2e /test/tmux /test/cmd/controlplane /test/internal/controlplane /test/internal/kubeletsim /test/internal/scalegen

test: need-prometheus need-tmux e2e-assets test-unit ## run every test: unit (-race), console (teatest + tmux), end-to-end on a real control plane
	KUBEDIAGNOSE_ASSETS="$$(hack/e2e-assets.sh 2>/dev/null | tail -n 1)" $(GO) test -count=1 -timeout 40m \
		$$($(GO) list ./... | grep $(foreach p,$(SYSTEM_PKGS),-e $(p)))

.PHONY: test-unit
test-unit: need-prometheus ## run the tests that need no control plane or terminal, with the race detector
	$(GO) test -race -count=1 -timeout 20m $$($(GO) list ./... | grep -v $(foreach p,$(SYSTEM_PKGS),-e $(p)))

# The metrics, rollout and cmd packages' tests (and the e2e and tmux ones) start a real
# Prometheus: Debian's package, or PROMETHEUS_BINARY (test/testbed/promtest).
.PHONY: need-prometheus need-tmux
need-prometheus:
	@test -x "$${PROMETHEUS_BINARY:-/usr/bin/prometheus}" || { echo "make test needs Prometheus: apt-get install prometheus (Debian, Ubuntu), or set PROMETHEUS_BINARY to a prometheus binary" >&2; exit 1; }
need-tmux:
	@command -v tmux >/dev/null || { echo "make test needs tmux for the real-terminal tests: apt-get install tmux (Debian, Ubuntu) or brew install tmux" >&2; exit 1; }

.PHONY: bench
bench: ## run the Go benchmarks
	$(GO) test -run '^$$' -bench . -benchmem ./diagnose/ ./internal/dump/ ./internal/metrics/ ./tui/

.PHONY: bench-dump
bench-dump: ## time the dump reader on a 20,000-pod dump against python's json.load (hack/bench-dump.sh)
	hack/bench-dump.sh

.PHONY: bench-scale
# Not part of `make test`: it loads 20,000 pods (BENCH_DEPLOYMENTS=5000 for 50,000) into a real
# control plane and takes several minutes and gigabytes; docs/performance.md has the numbers.
bench-scale: ## time kubectl get, audit, dump, audit --dump and the console (k9s, popeye if installed) on a 20k-pod namespace
	hack/bench-scale.sh

.PHONY: fuzz
# Each target fuzzes for FUZZTIME; the seed corpora are in each package's testdata/fuzz.
FUZZTIME ?= 30s
FUZZ_TARGETS = ./internal/dump/:FuzzRead ./internal/dump/:FuzzLogBlock ./internal/dump/:FuzzEvent \
	./internal/dump/:FuzzDecodeObject ./internal/dump/:FuzzReadHead ./internal/dump/:FuzzValidValue \
	./diagnose/:FuzzDescend ./diagnose/facts/:FuzzReadLine ./diagnose/facts/:FuzzTokenize ./diagnose/facts/:FuzzDecodeFields \
	./internal/live/:FuzzLiveDecode
fuzz: ## fuzz the dump reader, the log and event parsers, the field-path walker and the live decode path, FUZZTIME each
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} in $${t%%:*} for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s "$${t%%:*}"; \
	done

.PHONY: fixtures
fixtures: e2e-assets ## rebuild the demo dump and testdata/fixtures on a real control plane (python3, PyYAML)
	hack/fixtures/make-fixtures.sh

.PHONY: screenshots
screenshots: build ## regenerate screenshots/*.png from the demo
	hack/screenshots.sh

.PHONY: fmt
fmt: ## format the code
	gofmt -w $$(git ls-files '*.go')

.PHONY: lint
lint: docs-check ## vet, gofmt check, golangci-lint (pinned) and the generated docs up to date
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run ./...

.PHONY: tidy-check
tidy-check: ## fail when go.mod/go.sum are not tidy
	$(GO) mod tidy -diff

GORELEASER_VERSION ?= v2.15.1
GORELEASER := $(GO) run github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
# Where `make install` puts the executables: go install's directory, which is on PATH for Go users.
INSTALL_DIR ?= $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)

.PHONY: install
install: ## put kubectl-diagnose and kubectl_complete-diagnose (the script kubectl runs to complete the plugin) in INSTALL_DIR
	$(GO) build -ldflags '$(LDFLAGS)' -o $(INSTALL_DIR)/kubectl-diagnose .
	install -m 0755 cmd/kubectl_complete-diagnose $(INSTALL_DIR)/kubectl_complete-diagnose
	@echo "installed in $(INSTALL_DIR); try: kubectl diagnose version"

.PHONY: docs-check
docs-check: ## fail when docs/cli, docs/schema.md or the ClusterRole in deploy/ differ from what make docs generates
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(GO) run ./hack/gendocs "$$tmp/cli" && $(GO) run ./hack/schemadoc "$$tmp/schema.md" && \
	$(GO) run ./hack/genrbac deploy/kubectl-diagnose.yaml "$$tmp/kubectl-diagnose.yaml" && \
	diff -ru docs/cli "$$tmp/cli" && diff -u docs/schema.md "$$tmp/schema.md" && \
	diff -u deploy/kubectl-diagnose.yaml "$$tmp/kubectl-diagnose.yaml" || \
	{ echo "docs/cli, docs/schema.md or deploy/kubectl-diagnose.yaml is out of date: run make docs" >&2; exit 1; }

.PHONY: docs
docs: ## regenerate docs/cli from the commands' --help, docs/schema.md from the report types and the ClusterRole in deploy/ from the kinds the source reads (tests fail when they drift)
	$(GO) run ./hack/gendocs docs/cli
	$(GO) run ./hack/schemadoc docs/schema.md
	$(GO) run ./hack/genrbac deploy/kubectl-diagnose.yaml

.PHONY: release-check
release-check: ## goreleaser check, this machine's release archive checked, and krew installing it from a custom index (CI)
	GO='$(GO)' GORELEASER='$(GORELEASER)' hack/release-check.sh
	@# The archive is this machine's target only; Windows is the one that is not unix.
	GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null .

.PHONY: release-snapshot
release-snapshot: ## every release archive, checksums and the validated krew index (dist/krew-index) in dist/, uploading nothing
	$(GORELEASER) release --snapshot --clean
	$(GO) run ./hack/krew -dist dist -index dist/krew-index
	$(GO) run ./hack/krew -validate dist/krew-index/plugins/diagnose.yaml
	@echo "dist/krew-index is the tree of the custom krew index; its plugins/diagnose.yaml is valid"
