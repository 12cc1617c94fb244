#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager and kubectl from the Go module proxy into a
# cache directory, once. k8s.io/kubernetes cannot be `go install`ed directly (its go.mod replaces
# the staging modules with local paths), so it is built from a small wrapper module that requires it
# and points every k8s.io staging module at its published v0.x release.
#
#   KUBEDIAGNOSE_ASSETS=/path hack/e2e-assets.sh      # default: $XDG_CACHE_HOME or ~/.cache
# Prints the directory that holds the binaries on its last line.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.2}
STAGING_VERSION=${STAGING_VERSION:-v0.37.2}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
cache=${XDG_CACHE_HOME:-$HOME/.cache}
dir=${KUBEDIAGNOSE_ASSETS:-$cache/kubectl-diagnose/e2e-assets/k8s-$K8S_VERSION-etcd-$ETCD_VERSION}
mkdir -p "$dir"

want=(etcd kube-apiserver kube-controller-manager kubectl)
missing=()
for b in "${want[@]}"; do [ -x "$dir/$b" ] || missing+=("$b"); done
if [ ${#missing[@]} -eq 0 ]; then
  echo "e2e assets are cached in:" >&2
  echo "$dir"
  exit 0
fi
echo "building ${missing[*]} into $dir (a cold build takes about 12 minutes on 2 cores)" >&2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOWORK=off CGO_ENABLED=0

need() { local b; for b in "${missing[@]}"; do [ "$b" = "$1" ] && return 0; done; return 1; }

if need etcd; then
  mkdir -p "$work/etcd" && cd "$work/etcd"
  go mod init e2e-assets/etcd >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2
  go build -trimpath -o "$dir/etcd.tmp" go.etcd.io/etcd/server/v3 >&2
  mv "$dir/etcd.tmp" "$dir/etcd"
fi

k8s=()
for b in kube-apiserver kube-controller-manager kubectl; do need "$b" && k8s+=("$b"); done
if [ ${#k8s[@]} -gt 0 ]; then
  mkdir -p "$work/k8s" && cd "$work/k8s"
  go mod init e2e-assets/k8s >/dev/null 2>&1
  go mod download -json "k8s.io/kubernetes@$K8S_VERSION" >"$work/k8s.json"
  kdir=$(sed -n 's/.*"Dir": "\(.*\)",*/\1/p' "$work/k8s.json")
  {
    echo "require k8s.io/kubernetes $K8S_VERSION"
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#replace \1 => \1 '"$STAGING_VERSION"'#p' "$kdir/go.mod"
  } >>go.mod
  go mod tidy >/dev/null 2>&1 || true
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${K8S_VERSION#v1.}"
  ldflags="${ldflags%.*} -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
  for b in "${k8s[@]}"; do
    case $b in
      kubectl) pkg=k8s.io/kubernetes/cmd/kubectl ;;
      *) pkg=k8s.io/kubernetes/cmd/$b ;;
    esac
    go build -trimpath -ldflags "$ldflags" -o "$dir/$b.tmp" "$pkg" >&2
    mv "$dir/$b.tmp" "$dir/$b"
  done
fi
echo "e2e assets built in:" >&2
echo "$dir"
