#!/usr/bin/env bash
# make bench-scale: start a control plane, load the scale namespace (BENCH_DEPLOYMENTS × 10 pods,
# a Service each, 10% broken; test/internal/scalegen) and time, side by side in one run, the
# floor (kubectl get of the kinds the audit reads), audit live, dump, audit --dump, the console's
# time to its first table, and k9s and Popeye when they are on PATH. Prints one Markdown table;
# docs/performance.md has the current numbers and what the namespace holds.
#
# Environment: BENCH_DEPLOYMENTS (2000), BENCH_PODS_PER (10), BENCH_RUNS (3, the median is
# printed), BENCH_NAMESPACE (scale), KUBEDIAGNOSE_ASSETS (the e2e assets), BENCH_VMEM_CP (KiB of
# address space for the control plane and generator; etcd maps 10 GiB up front) and
# BENCH_VMEM_TOOL (KiB for each measured tool), BENCH_KEEP=1 to leave the work directory, and
# BENCH_KUBECONFIG to measure a namespace already loaded (by `scalegen serve` or `scalegen load`,
# still running) instead of starting a control plane, BENCH_KEYS (30) `j` presses timed in the
# console, BENCH_SKIP_GEN=1 to leave out the offline generator's row.
set -euo pipefail

cd "$(dirname "$0")/.."
deployments=${BENCH_DEPLOYMENTS:-2000}
pods_per=${BENCH_PODS_PER:-10}
runs=${BENCH_RUNS:-3}
ns=${BENCH_NAMESPACE:-scale}
assets=${KUBEDIAGNOSE_ASSETS:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-diagnose/e2e-assets/k8s-v1.37.2-etcd-v3.6.16}
vmem_cp=${BENCH_VMEM_CP:-16000000}
vmem_tool=${BENCH_VMEM_TOOL:-6000000}
kubectl=$assets/kubectl
[[ -x $kubectl ]] || { echo "bench-scale: no kubectl in $assets; run make e2e-assets or set KUBEDIAGNOSE_ASSETS" >&2; exit 1; }
command -v tmux >/dev/null || { echo "bench-scale: tmux is needed for the console's time to first table" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "bench-scale: /usr/bin/time (GNU time) is needed" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-scale.XXXXXX")
gen_pid=
tmux_sessions=()
cleanup() {
	for s in "${tmux_sessions[@]}"; do tmux kill-session -t "$s" 2>/dev/null || true; done
	if [[ -n $gen_pid ]] && kill -0 "$gen_pid" 2>/dev/null; then
		kill -TERM "$gen_pid" 2>/dev/null || true
		wait "$gen_pid" 2>/dev/null || true
	fi
	if [[ ${BENCH_KEEP:-} == 1 ]]; then echo "bench-scale: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log() { echo "bench-scale: $*" >&2; }

# A session that outlives every measured one: killing the last session stops the tmux server,
# and a session started while it exits fails with "server exited unexpectedly" (it ended a run
# here after the rows before the console's).
tmux_sessions+=("bench-scale-$$-hold")
tmux new-session -d -s "bench-scale-$$-hold" "sleep 86400"

log "building kubectl-diagnose and scalegen"
go build -o "$work/kubectl-diagnose" .
go build -o "$work/scalegen" ./test/cmd/scalegen
export KUBEDIAGNOSE_ASSETS=$assets

kc=$work/kubeconfig
load_s=-
if [[ -n ${BENCH_KUBECONFIG:-} ]]; then
	cp "$BENCH_KUBECONFIG" "$kc"
	log "measuring the namespace $ns that $BENCH_KUBECONFIG reaches"
else
	log "starting the control plane and loading $deployments Deployments × $pods_per pods into $ns (log: $work/scalegen.log)"
	load_start=$(date +%s)
	(
		ulimit -v "$vmem_cp"
		exec "$work/scalegen" serve -namespace "$ns" -deployments "$deployments" -pods-per "$pods_per" -kubeconfig-out "$kc"
	) >"$work/scalegen.log" 2>&1 &
	gen_pid=$!
	until [[ -s $kc ]]; do
		if ! kill -0 "$gen_pid" 2>/dev/null; then
			tail -n 20 "$work/scalegen.log" >&2
			echo "bench-scale: the generator ended before the namespace settled" >&2
			exit 1
		fi
		sleep 2
	done
	load_s=$(($(date +%s) - load_start))
	log "loaded in ${load_s}s"
fi
export KUBECONFIG=$kc

# measure NAME CMD...: runs CMD BENCH_RUNS times under ulimit -v with GNU time; records the
# median wall time, the largest max RSS, the output size and the median CPU time (user+sys,
# which the other jobs on a shared machine swing far less than wall time) in $work/results.
measure() {
	local name=$1
	shift
	local walls=() cpus=() rss=0 bytes=0
	for ((i = 0; i < runs; i++)); do
		rm -rf "$work/out-dir"
		local code=0
		(ulimit -v "$vmem_tool"; /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$@" >"$work/out" 2>"$work/err") || code=$?
		if ((code != 0)); then
			# audit exits 3 only with --fail-on: anything non-zero here is a failure to report.
			log "$name failed (exit $code): $(tail -n 3 "$work/err")"
			echo "$name|failed||" >>"$work/results"
			return 0
		fi
		read -r wall kib user sys <"$work/time"
		walls+=("$wall")
		cpus+=("$(echo "$user + $sys" | bc)")
		((kib > rss)) && rss=$kib
		bytes=$(stat -c %s "$work/out")
		[[ -d $work/out-dir ]] && bytes=$(du -sb "$work/out-dir" | cut -f1)
	done
	local median cpu
	median=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	cpu=$(printf '%s\n' "${cpus[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	cpu=$(printf %.2f "$cpu")
	echo "$name|$median|$((rss / 1024))|$bytes|$cpu" >>"$work/results"
	log "$name: ${median}s (runs: ${walls[*]}), CPU ${cpu}s, max RSS $((rss / 1024)) MiB"
}

# first_table NAME PATTERN CMD...: starts CMD in a detached 200x50 tmux session and records the
# seconds until the screen shows PATTERN (a table row), polling every 100 ms, BENCH_RUNS times.
first_table() {
	local name=$1 pattern=$2
	shift 2
	local walls=() cmd
	cmd=$(printf '%q ' "$@")
	for ((i = 0; i < runs; i++)); do
		local s="bench-scale-$$-$i-${name//[^a-z0-9]/}"
		tmux_sessions+=("$s")
		local start end shown=
		start=$(date +%s.%N)
		tmux new-session -d -s "$s" -x 200 -y 50 "ulimit -v $vmem_tool; KUBECONFIG=$kc $cmd; sleep 600"
		while :; do
			if tmux capture-pane -p -t "$s" 2>/dev/null | grep -Eq "$pattern"; then shown=1; break; fi
			end=$(date +%s.%N)
			if (($(echo "$end - $start > 300" | bc))); then break; fi
			sleep 0.1
		done
		end=$(date +%s.%N)
		tmux capture-pane -p -t "$s" >"$work/screen-${name//[^a-z0-9]/}" 2>/dev/null || true
		tmux kill-session -t "$s" 2>/dev/null || true
		if [[ -z $shown ]]; then
			log "$name: no table within 300 s; last screen in $work"
			echo "$name|failed||" >>"$work/results"
			return 0
		fi
		walls+=("$(echo "$end - $start" | bc)")
	done
	local median
	median=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}')
	echo "$name|$median||" >>"$work/results"
	log "$name: ${median}s to the first table (runs: ${walls[*]})"
}

# in_tmux SESSION CMD...: starts CMD itself (exec, so the pane's pid is its pid) in a detached
# 200x50 tmux session under ulimit -v and prints that pid.
in_tmux() {
	local s=$1 cmd
	shift
	cmd=$(printf '%q ' "$@")
	tmux_sessions+=("$s")
	tmux new-session -d -s "$s" -x 200 -y 50 "ulimit -v $vmem_tool; KUBECONFIG=$kc exec $cmd"
	tmux display -p -t "$s" '#{pane_pid}'
}

# wait_screen SESSION PATTERN [ABSENT]: polls the screen every 50 ms until it shows PATTERN
# (and not ABSENT); fails after 600 s.
wait_screen() {
	local s=$1 pattern=$2 absent=${3:-} deadline=$(($(date +%s) + 600)) screen
	while (($(date +%s) < deadline)); do
		screen=$(tmux capture-pane -p -t "$s" 2>/dev/null) || return 1
		if grep -Eq "$pattern" <<<"$screen" && { [[ -z $absent ]] || ! grep -Eq "$absent" <<<"$screen"; }; then return 0; fi
		sleep 0.05
	done
	return 1
}

hwm() { awk '/^VmHWM/ {print int($2 / 1024)}' "/proc/$1/status" 2>/dev/null; }

# console_live CMD...: one run of the live console in tmux: seconds to the first workload rows
# (names, shapes possibly still "reading"), to the complete diagnosis (the header says "live",
# nothing reading), its peak RSS (VmHWM) then, and the time from each of BENCH_KEYS `j` presses
# to a changed screen below the header (capture-pane with attributes, so the cursor's move
# shows; the header's clock is left out). The key times are an upper bound: each poll costs a
# tmux round trip, measured alone and printed beside them.
console_live() {
	local s="bench-scale-$$-console" pid start t_rows t_done
	start=$(date +%s.%N)
	pid=$(in_tmux "$s" "$@")
	if ! wait_screen "$s" '[a-z]+-[0-9]{4} '; then
		log "console: no rows within 600 s"
		echo "console, first rows|failed||" >>"$work/results"
		return 0
	fi
	t_rows=$(echo "$(date +%s.%N) - $start" | bc)
	if ! wait_screen "$s" 'live updated' 'reading'; then
		log "console: not complete within 600 s"
		echo "console, complete diagnosis|failed||" >>"$work/results"
		return 0
	fi
	t_done=$(echo "$(date +%s.%N) - $start" | bc)
	local rss
	rss=$(hwm "$pid")
	echo "console, first rows|$(printf %.2f "$t_rows")||" >>"$work/results"
	echo "console, complete diagnosis|$(printf %.2f "$t_done")|$rss|" >>"$work/results"
	log "console: rows after ${t_rows}s, complete after ${t_done}s, VmHWM $rss MiB"
	sleep 2
	local keys=${BENCH_KEYS:-30} ms=() before after t0 t1 i
	t0=$(date +%s%N)
	for ((i = 0; i < 20; i++)); do tmux capture-pane -e -p -S 2 -t "$s" >/dev/null; done
	local poll_ms=$((($(date +%s%N) - t0) / 20000000))
	for ((i = 0; i < keys; i++)); do
		before=$(tmux capture-pane -e -p -S 2 -t "$s")
		t0=$(date +%s%N)
		tmux send-keys -t "$s" j
		while :; do
			after=$(tmux capture-pane -e -p -S 2 -t "$s")
			[[ $after != "$before" ]] && break
			(($(date +%s%N) - t0 > 5000000000)) && break
		done
		t1=$(date +%s%N)
		ms+=("$(((t1 - t0) / 1000000))")
		sleep 0.2
	done
	local sorted
	sorted=$(printf '%s\n' "${ms[@]}" | sort -n)
	local p50 p90
	p50=$(awk -v n="$keys" 'NR == int((n + 1) / 2) {print}' <<<"$sorted")
	p90=$(awk -v n="$keys" 'NR == int(n * 0.9 + 0.999) {print}' <<<"$sorted")
	echo "console, key to changed screen (tmux) ms p50/p90, poll ${poll_ms} ms|$p50/$p90|$(hwm "$pid")|" >>"$work/results"
	log "console: key to screen p50 ${p50} ms, p90 ${p90} ms over $keys keys (one poll ${poll_ms} ms); VmHWM now $(hwm "$pid") MiB"
	tmux kill-session -t "$s" 2>/dev/null || true
}

# peak_rss NAME PATTERN CMD...: starts CMD in tmux, waits for PATTERN and 30 s more (a view keeps
# reading and rendering after its first rows), and records its VmHWM.
peak_rss() {
	local name=$1 pattern=$2 s="bench-scale-$$-rss" pid
	shift 2
	pid=$(in_tmux "$s" "$@")
	if ! wait_screen "$s" "$pattern"; then
		log "$name: no rows within 600 s"
		echo "$name, peak RSS|failed||" >>"$work/results"
		return 0
	fi
	sleep 30
	local rss
	rss=$(hwm "$pid")
	echo "$name, peak RSS|–|$rss|" >>"$work/results"
	log "$name: VmHWM $rss MiB"
	tmux kill-session -t "$s" 2>/dev/null || true
}

: >"$work/results"
measure "kubectl get (floor)" "$kubectl" get deploy,rs,pods,events,svc,endpointslices -o json -n "$ns"
# The tool's 10 s default request timeout is for an interactive user; a 20k-pod list on a loaded
# 2-core control plane takes longer, and kubectl has no timeout at all.
rt=(--request-timeout 10m)
measure "kubectl-diagnose audit (live)" "$work/kubectl-diagnose" "${rt[@]}" audit -n "$ns" -o json
measure "kubectl-diagnose dump" "$work/kubectl-diagnose" "${rt[@]}" dump -n "$ns" --force --output-directory "$work/out-dir"
mkdir -p "$work/dump"
cp -r "$work/out-dir/." "$work/dump/" 2>/dev/null || "$work/kubectl-diagnose" "${rt[@]}" dump -n "$ns" --output-directory "$work/dump" >/dev/null
measure "kubectl-diagnose audit --dump" "$work/kubectl-diagnose" audit --dump "$work/dump" -o json
[[ ${BENCH_SKIP_GEN:-} == 1 ]] || measure "scalegen dump (offline generator)" "$work/scalegen" dump -namespace "$ns" -deployments "$deployments" -pods-per "$pods_per" -dir "$work/out-dir"
first_table "console, first table" 'never-starts|starts-and-dies|live-but-idle' "$work/kubectl-diagnose" "${rt[@]}" -n "$ns"
console_live "$work/kubectl-diagnose" "${rt[@]}" -n "$ns"
if command -v k9s >/dev/null; then
	# k9s writes its config, logs and screen dumps under $HOME and the XDG dirs: give it its own.
	export HOME=$work/k9s-home XDG_CONFIG_HOME=$work/k9s-home/config XDG_DATA_HOME=$work/k9s-home/data XDG_STATE_HOME=$work/k9s-home/state XDG_CACHE_HOME=$work/k9s-home/cache
	mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME"
	first_table "k9s, first Deployments table" "[a-z]+-[0-9]{4} +[0-9]+/[0-9]+" k9s --kubeconfig "$kc" -n "$ns" -c deploy --readonly
	first_table "k9s, first pods table" "$ns-node-|[a-z]+-[0-9]{4}-[a-z0-9]+-[a-z0-9]{5}" k9s --kubeconfig "$kc" -n "$ns" -c pods --readonly
	peak_rss "k9s, pod view" "[a-z]+-[0-9]{4}-[a-z0-9]+-[a-z0-9]{5}" k9s --kubeconfig "$kc" -n "$ns" -c pods --readonly
else
	log "k9s not on PATH; skipped (docs/performance.md says how to install it)"
fi
if command -v popeye >/dev/null; then
	measure "popeye" popeye --kubeconfig "$kc" -n "$ns" -o json
else
	log "popeye not on PATH; skipped (docs/performance.md says how to install it)"
fi

# What each kind costs to read: one list of it, as the floor reads it (JSON over the wire).
: >"$work/kinds"
for kind in deployments replicasets pods events services endpointslices; do
	(/usr/bin/time -f '%e' -o "$work/time" "$kubectl" get "$kind" -n "$ns" -o json >"$work/out") 2>/dev/null || true
	echo "$kind|$(cat "$work/time")|$(stat -c %s "$work/out")" >>"$work/kinds"
done

# Events by the kind of their involved object: what a field-selected read would cost.
: >"$work/events"
for k in Pod ReplicaSet Deployment StatefulSet DaemonSet Job CronJob PersistentVolumeClaim; do
	(/usr/bin/time -f '%e' -o "$work/time" "$kubectl" get events -n "$ns" --field-selector "involvedObject.kind=$k" -o json >"$work/out") 2>/dev/null || true
	echo "$k|$(cat "$work/time")|$(stat -c %s "$work/out")|$(grep -c '"kind": "Event"' "$work/out")" >>"$work/events"
done

floor=$(awk -F'|' 'NR==1 {print $2}' "$work/results")
pods=$("$kubectl" get pods -n "$ns" --no-headers 2>/dev/null | wc -l)
events=$("$kubectl" get events -n "$ns" --no-headers 2>/dev/null | wc -l)
echo
echo "Scale benchmark: $deployments Deployments, $pods pods, $events events in namespace $ns; loaded in ${load_s}s"
echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ); commit $(git rev-parse --short HEAD)"
echo
echo "| what | wall s (median of $runs) | × floor | CPU s (user+sys) | max RSS MiB | output bytes |"
echo "|---|---|---|---|---|---|"
while IFS='|' read -r name wall rss bytes cpu; do
	ratio=
	if [[ $wall =~ ^[0-9.]+$ && -n $floor && $floor != failed ]]; then ratio=$(echo "scale=2; $wall / $floor" | bc); fi
	echo "| $name | $wall | $ratio | ${cpu:-} | $rss | $bytes |"
done <"$work/results"
echo
echo "| kind | kubectl get -o json, s | bytes |"
echo "|---|---|---|"
while IFS='|' read -r kind wall bytes; do
	echo "| $kind | $wall | $bytes |"
done <"$work/kinds"
echo
echo "| events whose involvedObject.kind is | kubectl get events --field-selector, s | bytes | events |"
echo "|---|---|---|---|"
while IFS='|' read -r kind wall bytes n; do
	echo "| $kind | $wall | $bytes | $n |"
done <"$work/events"
