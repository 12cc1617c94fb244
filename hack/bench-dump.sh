#!/usr/bin/env bash
# Times the dump reader of the built binary on the 20,000-pod benchmark dump (2,000
# Deployments x 10 copies, with their ReplicaSets, Services, EndpointSlices and Events), beside
# Python's json.load of the same files. Usage: hack/bench-dump.sh [BINARY] (default
# bin/kubectl-diagnose, built first). The dump is written once to $KUBEDIAGNOSE_SCALE_DIR
# (default /tmp/kubectl-diagnose-scale) by TestWriteScaleDump in internal/dump.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-bin/kubectl-diagnose}
[ $# -gt 0 ] || make -s build
export KUBEDIAGNOSE_SCALE_DIR=${KUBEDIAGNOSE_SCALE_DIR:-/tmp/kubectl-diagnose-scale}
go test -count=1 -run '^TestWriteScaleDump$' ./internal/dump >/dev/null
dir=$KUBEDIAGNOSE_SCALE_DIR/dir
stream=$KUBEDIAGNOSE_SCALE_DIR/cluster-info-dump.json
mapfile -t files < <(find "$dir" -name '*.json' | sort)
mb=$(du -cb "${files[@]}" | tail -1 | cut -f1)
echo "dump: $dir, ${#files[@]} JSON files, $((mb / 1000000)) MB; $(nproc) processors, load $(cut -d' ' -f1-3 /proc/loadavg)"

run() { # label, command...
	local label=$1 tf
	shift
	tf=$(mktemp)
	/usr/bin/time -o "$tf" -f '%e %M %U %S' "$@" >/dev/null 2>&1
	read -r wall rss user sys <"$tf"
	rm -f "$tf"
	awk -v l="$label" -v w="$wall" -v r="$rss" -v u="$user" -v s="$sys" -v b="$mb" \
		'BEGIN { printf "%-34s %6.2f s  %7.1f MB/s  RSS %6.0f MB  CPU %6.2f s\n", l, w, b/1e6/w, r/1024, u+s }'
}
# The audit exits 1 when it finds broken workloads; only the time matters here.
run "audit --dump DIR" sh -c "'$bin' audit --dump '$dir' -o json || [ \$? -eq 1 ]"
run "audit --dump DIR -n team-007" sh -c "'$bin' audit --dump '$dir' -n team-007 -o json || [ \$? -eq 1 ]"
run "audit --dump STREAM" sh -c "'$bin' audit --dump '$stream' -o json || [ \$? -eq 1 ]"
run "python3 json.load of DIR's files" python3 -c 'import json,sys; [json.load(open(f)) for f in sys.argv[1:]]' "${files[@]}"
