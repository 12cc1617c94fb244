#!/usr/bin/env bash
# Renders the console's screenshots from the embedded demo: the workloads screen, the ingester's
# diagnosis, its logs tab and its timeline tab, and the worker's timeline tab (its restarts). The binary runs in tmux at a fixed size;
# `tmux capture-pane -e` keeps the colours, and freeze (a real terminal renderer) turns the
# capture into a PNG.
#
#   hack/screenshots.sh            # uses bin/kubectl-diagnose, building it when missing
#   BIN=/path/to/binary hack/screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."

FREEZE_VERSION=v0.2.2
WAZERO_VERSION=v1.12.0
COLS=110
ROWS=32
OUT=screenshots
BIN=${BIN:-bin/kubectl-diagnose}
# freeze is installed once into a tools cache outside the tree, from the Go module proxy.
TOOLS_DIR=${TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-diagnose/tools}
FREEZE=$TOOLS_DIR/freeze-$FREEZE_VERSION

command -v tmux >/dev/null || { echo "screenshots: tmux is required (apt-get install tmux)" >&2; exit 1; }
if [ ! -x "$FREEZE" ]; then
  # freeze $FREEZE_VERSION pins wazero v1.8.0, whose compiled PNG renderer crashes on Go 1.26;
  # it is built in a scratch module with wazero raised to $WAZERO_VERSION.
  mkdir -p "$TOOLS_DIR"
  build=$(mktemp -d)
  (
    cd "$build"
    printf 'module freezebuild\n\ngo 1.24\n' > go.mod
    printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/charmbracelet/freeze"\n' > tools.go
    go get "github.com/charmbracelet/freeze@$FREEZE_VERSION" "github.com/tetratelabs/wazero@$WAZERO_VERSION" >/dev/null
    go build -o "$FREEZE" github.com/charmbracelet/freeze
  )
  rm -rf "$build"
fi
[ -x "$BIN" ] || go build -o "$BIN" .

work=$(mktemp -d)
socket="kubectl-diagnose-shots-$$"
cleanup() { tmux -L "$socket" kill-server 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

t() { tmux -L "$socket" -f /dev/null "$@"; }

# wait_for TEXT: poll the pane until TEXT is on screen.
wait_for() {
  for _ in $(seq 1 100); do
    if t capture-pane -p -t shots | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  echo "screenshots: the screen never showed \"$1\":" >&2
  t capture-pane -p -t shots >&2
  exit 1
}

keys() {
  for k in "$@"; do
    t send-keys -t shots "$k"
    sleep 0.2
  done
}

# shot NAME: capture the pane with colours and render it.
shot() {
  sleep 0.3
  t capture-pane -e -p -t shots > "$work/$1.ansi"
  "$FREEZE" --language ansi --window --theme dracula --font.size 14 --padding 20 --margin 0 \
    --background "#1E1E2E" --border.radius 8 --output "$OUT/$1.png" "$work/$1.ansi" >/dev/null
  echo "wrote $OUT/$1.png"
}

mkdir -p "$OUT"
t new-session -d -s shots -x "$COLS" -y "$ROWS" \
  -e TERM=xterm-256color -e COLORTERM=truecolor -e NO_COLOR= \
  "${DEMO_CMD:-$BIN --demo}"
t set-option -t shots default-terminal tmux-256color >/dev/null

wait_for "telemetry-ingester"
shot workloads

# Find the ingester with the filter, open it: the Diagnosis tab, then the Logs tab.
keys / i n g e s t e r Enter Enter
wait_for "1 Diagnosis"
shot diagnosis-ingester

keys 4
wait_for "──"
shot logs-ingester

# The Timeline tab: the serving count against the declared count, revisions and the onset.
keys 6
wait_for "! onset"
shot timeline-ingester

# The worker's Timeline: its copies restart, and the restart mark is drawn.
keys Escape Escape / w o r k e r Enter Enter 6
wait_for "newest termination"
shot timeline-worker

keys q
