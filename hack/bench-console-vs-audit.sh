#!/usr/bin/env bash
# hack/bench-console-vs-audit.sh: the console's complete diagnosis against `audit` on the same
# source, measured alike (issue 12: "the complete diagnosis within 1.0x the time of audit").
# Each of BENCH_PAIRS pairs runs, one after the other in a 200x50 tmux pane under ulimit -v:
#   audit:   `/usr/bin/time ... kubectl-diagnose audit SOURCE -o json >/dev/null`, timed from the
#            pane's start to the line time prints when the audit exits;
#   console: `kubectl-diagnose SOURCE`, timed from the pane's start to the first screen whose
#            summary counts shapes (`never-starts N`) with nothing still `reading`;
# the order within a pair alternates, so neither always runs first. CPU is utime+stime of the
# process (the audit's from time, the console's from /proc/PID/stat at that screen); RSS is the
# peak (VmHWM). Prints every pair and the medians. Not part of make test.
#
# Environment: BENCH_DUMP (a dump path) or BENCH_KUBECONFIG (a kubeconfig; BENCH_NAMESPACE, default
# scale), BENCH_BIN (a built kubectl-diagnose; else bin/kubectl-diagnose, built), BENCH_PAIRS (5),
# BENCH_VMEM (6000000 KiB of address space per tool).
set -euo pipefail

cd "$(dirname "$0")/.."
pairs=${BENCH_PAIRS:-5}
vmem=${BENCH_VMEM:-6000000}
bin=${BENCH_BIN:-}
if [[ -z $bin ]]; then
	make -s build
	bin=$PWD/bin/kubectl-diagnose
fi
command -v tmux >/dev/null || { echo "bench-console-vs-audit: tmux is needed" >&2; exit 1; }
if [[ -n ${BENCH_DUMP:-} ]]; then
	src=(--dump "$BENCH_DUMP")
	env=()
elif [[ -n ${BENCH_KUBECONFIG:-} ]]; then
	src=(-n "${BENCH_NAMESPACE:-scale}" --request-timeout 10m)
	env=("KUBECONFIG=$BENCH_KUBECONFIG")
else
	echo "bench-console-vs-audit: set BENCH_DUMP or BENCH_KUBECONFIG" >&2
	exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-console-vs-audit.XXXXXX")
sessions=()
cleanup() {
	for s in "${sessions[@]}"; do tmux kill-session -t "$s" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# A session that outlives every measured one, so that killing one never stops the tmux server
# while the next is being started.
sessions+=("bcva-$$-hold")
tmux new-session -d -s "bcva-$$-hold" "sleep 86400"

now() { date +%s.%N; }
hwm() { awk '/^VmHWM/ {print int($2 / 1024)}' "/proc/$1/status" 2>/dev/null; }
cpu_of() { # pid: utime+stime in seconds
	awk -v hz="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz}' "/proc/$1/stat"
}

# audit_once: prints "wall cpu rss".
audit_once() {
	local s="bcva-$$-audit-$1" start screen line
	sessions+=("$s")
	start=$(now)
	tmux new-session -d -s "$s" -x 200 -y 50 "ulimit -v $vmem; env ${env[*]} /usr/bin/time -f 'AUDIT-DONE %e %U %S %M %x' $(printf '%q ' "$bin" audit "${src[@]}" -o json) >/dev/null; sleep 600"
	while :; do
		screen=$(tmux capture-pane -p -t "$s" 2>/dev/null) || { echo "bench-console-vs-audit: the audit's pane is gone" >&2; return 1; }
		line=$(grep -E '^AUDIT-DONE ' <<<"$screen" || true)
		[[ -n $line ]] && break
		(($(echo "$(now) - $start > 600" | bc))) && { echo "bench-console-vs-audit: audit not done in 600 s" >&2; return 1; }
		sleep 0.05
	done
	local wall
	wall=$(echo "$(now) - $start" | bc)
	tmux kill-session -t "$s"
	# shellcheck disable=SC2086
	set -- $line
	[[ $6 == 0 ]] || { echo "bench-console-vs-audit: audit exited $6" >&2; return 1; }
	printf '%.2f %.2f %d\n' "$wall" "$(echo "$3 + $4" | bc)" "$(($5 / 1024))"
}

# console_once: prints "wall cpu rss".
console_once() {
	local s="bcva-$$-console-$1" start pid screen
	sessions+=("$s")
	start=$(now)
	tmux new-session -d -s "$s" -x 200 -y 50 "ulimit -v $vmem; exec env ${env[*]} $(printf '%q ' "$bin" "${src[@]}")"
	pid=$(tmux display -p -t "$s" '#{pane_pid}')
	while :; do
		screen=$(tmux capture-pane -p -t "$s" 2>/dev/null) || { echo "bench-console-vs-audit: the console's pane is gone" >&2; return 1; }
		if grep -Eq 'never-starts +[0-9]' <<<"$screen" && ! grep -q 'reading' <<<"$screen"; then break; fi
		(($(echo "$(now) - $start > 600" | bc))) && { echo "bench-console-vs-audit: console not complete in 600 s" >&2; return 1; }
		sleep 0.05
	done
	local wall cpu rss
	wall=$(echo "$(now) - $start" | bc)
	cpu=$(cpu_of "$pid")
	rss=$(hwm "$pid")
	tmux kill-session -t "$s"
	printf '%.2f %s %d\n' "$wall" "$cpu" "$rss"
}

echo "source: ${src[*]} ${env[*]}; binary $bin; $(nproc) processors; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-22s %-22s %s\n' pair "audit wall/cpu/rss" "console wall/cpu/rss" "console/audit wall"
for ((i = 1; i <= pairs; i++)); do
	if ((i % 2)); then
		a=$(audit_once "$i")
		c=$(console_once "$i")
	else
		c=$(console_once "$i")
		a=$(audit_once "$i")
	fi
	read -r aw ac ar <<<"$a"
	read -r cw cc cr <<<"$c"
	echo "$aw $cw" >>"$work/walls"
	printf '%-5s %-22s %-22s %.2f  (load %s)\n' "$i" "$aw s/$ac s/$ar MiB" "$cw s/$cc s/$cr MiB" "$(echo "$cw / $aw" | bc -l)" "$(cut -d' ' -f1 /proc/loadavg)"
done
# The middle value, or the mean of the two middle ones when the count is even.
median() { sort -n | awk '{v[NR] = $1} END {m = int((NR + 1) / 2); printf "%.2f", NR % 2 ? v[m] : (v[m] + v[m + 1]) / 2}'; }
echo "median: audit $(cut -d' ' -f1 "$work/walls" | median) s, console $(cut -d' ' -f2 "$work/walls" | median) s," \
	"console/audit per pair $(awk '{print $2 / $1}' "$work/walls" | median)"
