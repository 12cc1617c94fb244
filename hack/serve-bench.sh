#!/usr/bin/env bash
# Measures `kubectl-diagnose serve` at 20,000 pods (docs/performance.md, serve): writes the cloned
# fleet of BenchmarkScrape20kPods as a dump, serves it, and reports the series, the size of
# /metrics, and the process's resident memory once ready and after scrapes.
#   hack/serve-bench.sh [DIR]     (DIR defaults to a temporary directory, removed afterwards)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-$(mktemp -d)}
[[ $# -ge 1 ]] || trap 'rm -rf "$dir"' EXIT
# Everything at this size runs under a bound, so a runaway cannot take the machine's memory.
ulimit -v 8000000
if [[ ! -d $dir/dump ]]; then
	FLEET_DUMP=$dir/dump go test ./internal/serve -run '^$' -bench BenchmarkScrape20kPods -benchtime 1x -benchmem
fi
go build -o "$dir/kubectl-diagnose" .
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$dir/kubectl-diagnose" serve --dump "$dir/dump" --listen "127.0.0.1:$port" 2>"$dir/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null || true; [[ $# -ge 1 ]] || rm -rf "$dir"' EXIT
start=$(date +%s)
until [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz") == 200 ]]; do
	kill -0 $pid || { cat "$dir/serve.log"; exit 1; }
	sleep 1
done
echo "ready after $(( $(date +%s) - start ))s"
grep -E 'VmHWM|VmRSS' /proc/$pid/status | sed 's/^/after the read: /'
for i in 1 2 3 4 5; do curl -s "http://127.0.0.1:$port/metrics" >"$dir/metrics.txt"; done
grep -E 'VmHWM|VmRSS' /proc/$pid/status | sed 's/^/after 5 scrapes: /'
echo "series: $(grep -vc '^#' "$dir/metrics.txt") in all, $(grep -c '^kubectl_diagnose_' "$dir/metrics.txt") kubectl_diagnose_*"
echo "workloads: $(grep -c '^kubectl_diagnose_workload_shape' "$dir/metrics.txt")"
echo "/metrics: $(wc -c <"$dir/metrics.txt") bytes, $(curl -s -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port/metrics" | wc -c) gzipped"
grep -E '^(kubectl_diagnose_diagnosis_duration_seconds|process_resident_memory_bytes|go_memstats_heap_inuse_bytes)' "$dir/metrics.txt"
