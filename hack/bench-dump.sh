#!/usr/bin/env bash
# Times the dump reader of the built binary on two 20,000-pod dumps (2,000 Deployments x 10
# copies, with their ReplicaSets, Services, EndpointSlices and Events), beside Python's json.load
# of the same files. Usage: hack/bench-dump.sh [BINARY] (default bin/kubectl-diagnose, built
# first). Both are written once under $KUBEDIAGNOSE_SCALE_DIR (default /tmp/kubectl-diagnose-scale):
#   - SCALEGEN: the scalegen namespace as `kubectl-diagnose dump` writes it (scalegen dump: one
#     namespace, each workload's objects consistent, a tenth broken the usual ways), the dump of
#     issue 12;
#   - DIR and STREAM: TestWriteScaleDump's 20 namespaces in the cluster-info dump layout and as one
#     file, built from dev-mixed objects mixed across workloads (every workload is selected by
#     every Service of its namespace, so the report is 3 times larger): the stress case, and the
#     one -n is timed on.
# Then the audit's peak memory on each, anonymous and file-backed apart (see peak below).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-bin/kubectl-diagnose}
[ $# -gt 0 ] || make -s build
export KUBEDIAGNOSE_SCALE_DIR=${KUBEDIAGNOSE_SCALE_DIR:-/tmp/kubectl-diagnose-scale}
go test -count=1 -run '^TestWriteScaleDump$' ./internal/dump >/dev/null
sgdir=$KUBEDIAGNOSE_SCALE_DIR/scalegen
if [ ! -d "$sgdir" ]; then
	go run ./test/cmd/scalegen dump -namespace scale -deployments 2000 -pods-per 10 -dir "$sgdir.tmp" 2>/dev/null
	mv "$sgdir.tmp" "$sgdir"
fi
mapfile -t sgfiles < <(find "$sgdir" -name '*.json' | sort)
sgmb=$(du -cb "${sgfiles[@]}" | tail -1 | cut -f1)
echo "dump: $sgdir, ${#sgfiles[@]} JSON files, $((sgmb / 1000000)) MB"
dir=$KUBEDIAGNOSE_SCALE_DIR/dir
stream=$KUBEDIAGNOSE_SCALE_DIR/cluster-info-dump.json
mapfile -t files < <(find "$dir" -name '*.json' | sort)
mb=$(du -cb "${files[@]}" | tail -1 | cut -f1)
echo "dump: $dir, ${#files[@]} JSON files, $((mb / 1000000)) MB; $(nproc) processors, load $(cut -d' ' -f1-3 /proc/loadavg)"

run() { # label, bytes, command...
	local label=$1 mb=$2 tf
	shift 2
	tf=$(mktemp)
	/usr/bin/time -o "$tf" -f '%e %M %U %S' "$@" >/dev/null 2>&1
	read -r wall rss user sys <"$tf"
	rm -f "$tf"
	awk -v l="$label" -v w="$wall" -v r="$rss" -v u="$user" -v s="$sys" -v b="$mb" \
		'BEGIN { printf "%-40s %6.2f s  %7.1f MB/s  RSS %6.0f MiB  CPU %6.2f s\n", l, w, b/1e6/w, r/1024, u+s }'
}
run "audit --dump SCALEGEN" "$sgmb" "$bin" audit --dump "$sgdir" -o json
run "python3 json.load of SCALEGEN's files" "$sgmb" python3 -c 'import json,sys; [json.load(open(f)) for f in sys.argv[1:]]' "${sgfiles[@]}"
run "audit --dump DIR" "$mb" "$bin" audit --dump "$dir" -o json
run "audit --dump DIR -n team-007" "$mb" "$bin" audit --dump "$dir" -n team-007 -o json
run "audit --dump STREAM" "$mb" "$bin" audit --dump "$stream" -o json
run "python3 json.load of DIR's files" "$mb" python3 -c 'import json,sys; [json.load(open(f)) for f in sys.argv[1:]]' "${files[@]}"

# The audit's memory, in runs of its own (the sampling costs CPU): the peak of the process's
# anonymous memory (its heap, stacks and runtime: what a read and a diagnosis take) and of its
# file-backed pages (the binary's code and read-only data, mapped whatever the input;
# `kubectl-diagnose version` alone holds them), sampled from /proc every 5 ms. Linux only.
peak() { # label, command...
	local label=$1 pid k v anon=0 file=0
	shift
	"$@" >/dev/null 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		while read -r k v _; do
			case $k in
			RssAnon:) ((v > anon)) && anon=$v ;;
			RssFile:) ((v > file)) && file=$v ;;
			esac
		done <"/proc/$pid/status" 2>/dev/null || true
		sleep 0.005
	done
	wait "$pid" || { echo "$label: exit $?" >&2; return 1; }
	printf '%-40s peak anonymous %4d MiB, file-backed %3d MiB\n' "$label" $((anon / 1024)) $((file / 1024))
}
if [ -r /proc/self/status ]; then
	peak "audit --dump SCALEGEN" "$bin" audit --dump "$sgdir" -o json
	peak "audit --dump DIR" "$bin" audit --dump "$dir" -o json
	peak "audit --dump STREAM" "$bin" audit --dump "$stream" -o json
	peak "version" "$bin" version
fi
