#!/usr/bin/env bash
# hack/bench-console-churn.sh [console|k9s]...: the live console (or k9s's Pod view) on a loaded
# scale namespace while `scalegen churn` changes pod statuses at BENCH_RATE writes a second, as
# the kubelets would (restarts, readiness flips). For each target, in a 200x50 tmux pane under
# ulimit -v: wait until it has settled, measure its CPU over BENCH_IDLE quiet seconds, then over
# BENCH_SECONDS of churn (utime+stime from /proc/PID/stat, as % of one core), its peak RSS
# (VmHWM), the API server's pods/log requests meanwhile (apiserver_request_total), and, for the
# console, how long each of BENCH_MARKERS broken workloads takes to show on screen: the marker's
# name is typed into the filter, scalegen breaks it (SIGUSR1: its pods restart and crash-loop),
# and the pane is polled every 50 ms until its row says starts-and-dies; the lag is from the
# answer to the marker's last write to that capture. docs/performance.md
# has the numbers. Not part of make test.
#
# Environment: BENCH_KUBECONFIG (required: the admin kubeconfig `scalegen serve -kubeconfig-out`
# wrote, namespace set; the namespace stays loaded while this runs), BENCH_NAMESPACE (scale),
# BENCH_BIN (a built kubectl-diagnose; else built from this tree), BENCH_SCALEGEN (likewise),
# BENCH_K9S (k9s; default k9s on PATH or ~/go/bin/k9s), BENCH_RATE (50), BENCH_SECONDS (90),
# BENCH_IDLE (30), BENCH_SETTLE (20: seconds after the first complete screen before measuring),
# BENCH_MARKERS (3), BENCH_VMEM (6000000 KiB of address space per tool), BENCH_KEEP=1 to leave
# the work directory.
set -euo pipefail

cd "$(dirname "$0")/.."
kc=${BENCH_KUBECONFIG:?set BENCH_KUBECONFIG to the admin kubeconfig of the loaded namespace}
ns=${BENCH_NAMESPACE:-scale}
rate=${BENCH_RATE:-50}
secs=${BENCH_SECONDS:-90}
idle=${BENCH_IDLE:-30}
settle=${BENCH_SETTLE:-20}
markers=${BENCH_MARKERS:-3}
vmem=${BENCH_VMEM:-6000000}
assets=${KUBEDIAGNOSE_ASSETS:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-diagnose/e2e-assets/k8s-v1.37.2-etcd-v3.6.16}
kubectl=$assets/kubectl
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(console)
[[ -x $kubectl ]] || { echo "bench-console-churn: no kubectl in $assets; set KUBEDIAGNOSE_ASSETS" >&2; exit 1; }
command -v tmux >/dev/null || { echo "bench-console-churn: tmux is needed" >&2; exit 1; }
command -v bc >/dev/null || { echo "bench-console-churn: bc is needed" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-console-churn.XXXXXX")
sock=bench-console-churn-$$
churn_pid=
cleanup() {
	if [[ -n $churn_pid ]] && kill -0 "$churn_pid" 2>/dev/null; then kill -INT "$churn_pid" 2>/dev/null || true; wait "$churn_pid" 2>/dev/null || true; fi
	tmux -L "$sock" kill-server 2>/dev/null || true
	if [[ ${BENCH_KEEP:-} == 1 ]]; then echo "bench-console-churn: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
log() { echo "bench-console-churn: $(date -u +%H:%M:%S) $*" >&2; }

bin=${BENCH_BIN:-}
if [[ -z $bin ]]; then go build -o "$work/kubectl-diagnose" . && bin=$work/kubectl-diagnose; fi
scalegen=${BENCH_SCALEGEN:-}
if [[ -z $scalegen ]]; then go build -o "$work/scalegen" ./test/cmd/scalegen && scalegen=$work/scalegen; fi
k9s=${BENCH_K9S:-$(command -v k9s || echo "$HOME/go/bin/k9s")}
tck=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hwm() { awk '/^VmHWM/ {print int($2 / 1024)}' "/proc/$1/status"; }
rss() { awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$1/status"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
load1() { cut -d' ' -f1 /proc/loadavg; }
# requests SUBRESOURCE: the API server's requests on pods/SUBRESOURCE so far, of every client
# (log: the tails read; status: the status writes).
requests() {
	"$kubectl" --kubeconfig "$kc" get --raw /metrics |
		awk -v want="subresource=\"$1\"" '/^apiserver_request_total\{/ && /resource="pods"/ && index($0, want) {n += $NF} END {printf "%d\n", n}'
}
log_requests() { requests log; }
screen() { tmux -L "$sock" capture-pane -p -t bench 2>/dev/null; }
# wait_screen PATTERN [ABSENT] [SECONDS]: until the pane shows PATTERN and not ABSENT.
wait_screen() {
	local pattern=$1 absent=${2:-} deadline=$((SECONDS + ${3:-900})) s
	while ((SECONDS < deadline)); do
		s=$(screen) || return 1
		if grep -Eq "$pattern" <<<"$s" && { [[ -z $absent ]] || ! grep -Eq "$absent" <<<"$s"; }; then return 0; fi
		sleep 0.05
	done
	return 1
}
cpu_pct() { echo "scale=1; 100 * ($2 - $1) / $tck / $3" | bc; }

# measure TARGET: one run; appends a Markdown row to $work/results.
measure() {
	local target=$1 cmd ready absent=''
	case $target in
	console)
		cmd=$(printf '%q ' "$bin" --kubeconfig "$kc" --request-timeout 10m -n "$ns")
		ready='live updated'
		absent='reading'
		;;
	k9s)
		[[ -x $k9s ]] || { log "no k9s at $k9s; skipped"; return 0; }
		export HOME=$work/k9s-home XDG_CONFIG_HOME=$work/k9s-home/config XDG_DATA_HOME=$work/k9s-home/data XDG_STATE_HOME=$work/k9s-home/state XDG_CACHE_HOME=$work/k9s-home/cache
		mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME"
		cmd=$(printf '%q ' "$k9s" --kubeconfig "$kc" -n "$ns" -c pods --readonly)
		ready='[a-z]+-[0-9]{4}-[a-z0-9]+-[a-z0-9]{5}'
		;;
	*) echo "bench-console-churn: unknown target $target (console, k9s)" >&2; exit 2 ;;
	esac
	tmux -L "$sock" kill-server 2>/dev/null || true
	tmux -L "$sock" -f /dev/null new-session -d -s bench -x 200 -y 50 -e TERM=xterm-256color "ulimit -v $vmem; exec $cmd 2>$work/$target.stderr"
	local pid start
	pid=$(tmux -L "$sock" display -p -t bench '#{pane_pid}')
	start=$SECONDS
	log "$target: pid $pid; waiting for its screen to settle"
	if ! wait_screen "$ready" "$absent"; then
		log "$target: not ready in 900 s"; screen >&2; return 1
	fi
	log "$target: ready after $((SECONDS - start)) s (VmHWM $(hwm "$pid") MiB); $settle s more"
	sleep "$settle"

	local c0 c1 t0 t1 l0 l1
	c0=$(cpu_ticks "$pid") t0=$(date +%s.%N) l0=$(log_requests)
	sleep "$idle"
	c1=$(cpu_ticks "$pid") t1=$(date +%s.%N) l1=$(log_requests)
	local idle_pct idle_logs
	idle_pct=$(cpu_pct "$c0" "$c1" "$(echo "$t1 - $t0" | bc)")
	idle_logs=$(echo "scale=2; ($l1 - $l0) / ($t1 - $t0)" | bc)
	log "$target: idle ${idle_pct}% of a core over ${idle} s, ${idle_logs} log requests/s"

	# The churn writes restarts only for its first 10 s (no readiness is due yet); the window
	# starts once it is steady and ends before it stops.
	"$scalegen" churn -kubeconfig "$kc" -namespace "$ns" -rate "$rate" -duration "$((secs + 15))s" -markers "$markers" -seed "$RANDOM" >"$work/churn.log" 2>&1 &
	churn_pid=$!
	until grep -q 'churn: steady' "$work/churn.log"; do
		kill -0 "$churn_pid" 2>/dev/null || { log "scalegen churn ended:"; cat "$work/churn.log" >&2; return 1; }
		sleep 0.05
	done
	local load_start names s0 s1
	c0=$(cpu_ticks "$pid") t0=$(date +%s.%N) l0=$(log_requests) s0=$(requests status) load_start=$(load1)
	names=$(sed -n 's/.*markers \[\(.*\)\]$/\1/p' "$work/churn.log")
	log "$target: churning at $rate/s for $secs s; markers: $names"
	local lags=() i=0 name
	for name in $names; do
		[[ $target == console ]] || break
		# Markers spread over the window, none in its last 10 s.
		local at=$((15 + i * (secs - 25) / markers))
		while (($(echo "$(date +%s.%N) - $t0 < $at" | bc))); do sleep 0.2; done
		tmux -L "$sock" send-keys -t bench / "$name" Enter
		if ! wait_screen "healthy +deploy/${name} " '' 10; then
			log "console: the filter did not show $name healthy within 10 s:"; screen | head -6 >&2
			tmux -L "$sock" send-keys -t bench Escape
			i=$((i + 1))
			continue
		fi
		kill -USR1 "$churn_pid"
		local broke=
		for _ in $(seq 200); do
			broke=$(sed -n "s/.*marker $name broken ([0-9]* pods) at \([0-9]*\) ms.*/\1/p" "$work/churn.log")
			[[ -n $broke ]] && break
			sleep 0.05
		done
		if [[ -z $broke ]]; then log "console: scalegen did not break $name"; i=$((i + 1)); continue; fi
		if wait_screen "starts-and-dies +deploy/${name} " '' 30; then
			lags+=("$(($(now_ms) - broke))")
			log "console: $name on screen $((${lags[-1]})) ms after its last write"
		else
			lags+=(">30000")
			log "console: $name not shown broken within 30 s"; screen >&2
		fi
		tmux -L "$sock" send-keys -t bench Escape
		i=$((i + 1))
	done
	while (($(echo "$(date +%s.%N) - $t0 < $secs" | bc))); do sleep 0.2; done
	c1=$(cpu_ticks "$pid") t1=$(date +%s.%N) l1=$(log_requests) s1=$(requests status)
	local load_end peak now_rss
	load_end=$(load1) peak=$(hwm "$pid") now_rss=$(rss "$pid")
	wait "$churn_pid" || true
	churn_pid=
	local window pct logs written
	window=$(echo "$t1 - $t0" | bc)
	pct=$(cpu_pct "$c0" "$c1" "$window")
	logs=$(echo "scale=2; ($l1 - $l0) / $window" | bc)
	written=$(echo "scale=1; ($s1 - $s0) / $window" | bc)
	log "$target: churn ${pct}% of a core over $(printf %.1f "$window") s ($written status writes/s), VmHWM $peak MiB, VmRSS $now_rss MiB, ${logs} log requests/s, marker lags ${lags[*]:-–} ms, load $load_start → $load_end"
	grep -E 'errors|missed|restored' "$work/churn.log" | tail -2 >&2 || true
	printf '| %s | %s → %s | %s | %s | %s%% | %s%% | %s | %s | %s | %s |\n' "$target" "$load_start" "$load_end" "$written" \
		"$(printf %.1f "$window")" "$idle_pct" "$pct" "$peak" "$now_rss" "$logs" "${lags[*]:-–}" >>"$work/results"
	tmux -L "$sock" kill-server 2>/dev/null || true
}

: >"$work/results"
for t in "${targets[@]}"; do measure "$t"; done
echo "| target | load avg | pod status writes/s | window s | CPU idle | CPU under churn | VmHWM MiB | VmRSS MiB at end | pods/log req/s | marker to screen ms |"
echo "|---|---|---|---|---|---|---|---|---|---|"
cat "$work/results"
