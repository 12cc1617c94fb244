#!/usr/bin/env bash
# hack/bench-frametrace.sh DUMP [KEY...]: open the console on DUMP in a tmux window with the
# frame trace on (KUBECTL_DIAGNOSE_FRAME_TRACE), wait for the complete diagnosis, send BENCH_KEYS
# keys BENCH_GAP seconds apart (the KEYs, tmux key names, in turn, in whole rounds; `j` by
# default), quit, and
# print the key-to-frame p50/p90/p99/max (test/cmd/frametrace), the console's CPU time and the
# load average. docs/performance.md has the numbers.
#
# Environment: BENCH_BIN (a built kubectl-diagnose; else it is built), BENCH_KEYS (300),
# BENCH_GAP (0.03), BENCH_SIZE (200x50), BENCH_VMEM (8000000 KiB of address space),
# BENCH_TRACE (keep the trace there), BENCH_STDERR (keep the console's stderr there: with
# GODEBUG=gctrace=1 it shows whether a collection ran while the keys were typed).
set -euo pipefail

cd "$(dirname "$0")/.."
dump=${1:?usage: hack/bench-frametrace.sh DUMP [KEY...]}
shift
keys=("$@")
[[ ${#keys[@]} -gt 0 ]] || keys=(j)
n=${BENCH_KEYS:-300}
# Whole rounds of the KEYs, so a round that opens a filter also closes it before q.
n=$(((n + ${#keys[@]} - 1) / ${#keys[@]} * ${#keys[@]}))
gap=${BENCH_GAP:-0.03}
size=${BENCH_SIZE:-200x50}
vmem=${BENCH_VMEM:-8000000}
command -v tmux >/dev/null || { echo "bench-frametrace: tmux is needed" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "bench-frametrace: /usr/bin/time (GNU time) is needed" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-frametrace.XXXXXX")
sock=bench-frametrace-$$
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

bin=${BENCH_BIN:-}
if [[ -z $bin ]]; then
	go build -o "$work/kubectl-diagnose" .
	bin=$work/kubectl-diagnose
fi
trace=${BENCH_TRACE:-$work/trace}
tmux -L "$sock" -f /dev/null new-session -d -s bench -x "${size%x*}" -y "${size#*x}" -e TERM=xterm-256color \
	"ulimit -v $vmem; KUBECTL_DIAGNOSE_FRAME_TRACE='$trace' /usr/bin/time -o '$work/time' -f '%e s wall %U+%S s cpu %M KB' '$bin' --dump '$dump' 2>'${BENCH_STDERR:-$work/stderr}'; echo \$? >'$work/status'"
tmux -L "$sock" set-option -t bench remain-on-exit on >/dev/null

# The diagnosis is complete when the header counts every workload and nothing says reading….
deadline=$((SECONDS + 300))
until screen=$(tmux -L "$sock" capture-pane -p -t bench) && grep -Eq ' 1/[0-9]+$' <<<"$screen" && ! grep -q 'reading' <<<"$screen"; do
	((SECONDS < deadline)) || { echo "bench-frametrace: no complete diagnosis in 300 s:" >&2; echo "$screen" >&2; exit 1; }
	[[ ! -e $work/status ]] || { echo "bench-frametrace: the console ended:" >&2; cat "$work/stderr" >&2; exit 1; }
	sleep 0.5
done
sleep 1
echo "load before: $(uptime)"
for ((i = 0; i < n; i++)); do
	tmux -L "$sock" send-keys -t bench "${keys[i % ${#keys[@]}]}"
	sleep "$gap"
done
sleep 1
tmux -L "$sock" send-keys -t bench q
for ((i = 0; i < 100; i++)); do [[ ! -s $work/status ]] || break; sleep 0.2; done
echo "load after:  $(uptime)"
[[ $(cat "$work/status" 2>/dev/null) == 0 ]] || { echo "bench-frametrace: exit status $(cat "$work/status" 2>/dev/null)" >&2; cat "$work/stderr" >&2; exit 1; }
echo "console: $(cat "$work/time")"
go run ./test/cmd/frametrace "$trace"
