// Package demo holds the dump that `kubectl-diagnose --demo` opens: namespace telemetry, made on a
// real kube-apiserver and kube-controller-manager by hack/fixtures/demo/scenario.py, embedded in
// the binary so the demo needs no cluster.
//
// Invariant: the embedded files are the output of `kubectl cluster-info dump` exactly as the
// fixture build wrote them; this package only reads them, and every Read returns a fresh snapshot
// that the caller may keep or change.
package demo
