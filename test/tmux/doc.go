// Package tmux drives the built kubectl-diagnose binary in a real terminal (tmux) and asserts
// what a person sees on the screen: on the embedded demo, and on a live control plane of its own
// (internal/controlplane) whose API server it stops and restarts. It has no non-test code.
//
// Invariant: the test fails, never skips, when tmux is missing; .ci/run installs it.
package tmux
