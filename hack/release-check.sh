#!/usr/bin/env bash
# The release check CI runs (make release-check): goreleaser's configuration is valid; the archive
# of this machine's platform, built from .goreleaser.yaml with its other targets left out, holds
# exactly the binary, kubectl's completion script, LICENSE and README.md; and krew (pinned, from
# the Go module proxy) adds a custom index of the archive's manifest, installs the plugin from it
# as users do, and the plugin and its completion script answer (hack/krew -check).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
GORELEASER=${GORELEASER:?set by the Makefile: go run github.com/goreleaser/goreleaser/v2@VERSION}
KREW_VERSION=${KREW_VERSION:-v0.4.3}

# shellcheck disable=SC2086 # GORELEASER is a command line
$GORELEASER check

goos=$($GO env GOOS)
goarch=$($GO env GOARCH)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# goreleaser release has no --single-target: a copy of the configuration builds one target.
sed -e "s/^    goos: \[.*\]\$/    goos: [$goos]/" -e "s/^    goarch: \[.*\]\$/    goarch: [$goarch]/" \
  .goreleaser.yaml > "$tmp/goreleaser.yaml"
if ! grep -q "^    goos: \[$goos\]\$" "$tmp/goreleaser.yaml" || ! grep -q "^    goarch: \[$goarch\]\$" "$tmp/goreleaser.yaml"; then
  echo "release-check: cannot narrow .goreleaser.yaml to $goos/$goarch: its builds' goos and goarch lines changed" >&2
  exit 1
fi
# shellcheck disable=SC2086
$GORELEASER release --snapshot --clean --config "$tmp/goreleaser.yaml"

GOBIN="$tmp/bin" GOFLAGS= $GO install "sigs.k8s.io/krew/cmd/krew@$KREW_VERSION"
$GO run ./hack/krew -dist dist -check -krew "$tmp/bin/krew"
