// Package tmux drives the built kubectl-diagnose binary in a real terminal (tmux) and asserts
// what a person sees on the screen: on the embedded demo and its dump and on a fixture's dump
// (the Timeline tab), with keys sent as a person types and a terminal pastes them, and on a live
// control plane of its own (test/internal/controlplane) whose API server it stops and restarts,
// directly or behind a proxy that stops it mid-list and drops connections as a load balancer
// does, or beside a real Prometheus (test/testbed/promtest) that it stops mid-session, and with the
// console's frame trace on (one drawn frame per key). It has no non-test code.
//
// Invariant: the test fails, never skips, when tmux is missing; .ci/run installs it.
package tmux
