// Package e2e runs the built kubectl-diagnose binary against a real control plane (etcd,
// kube-apiserver and kube-controller-manager v1.37.2 from `make e2e-assets`) with the simulated
// scheduler and kubelets of test/internal/kubeletsim, and asserts on `audit -o json`.
//
// Invariant: the tests never skip. Missing assets fail the run with the command that builds
// them; the tool under test only ever gets a kubeconfig, as a user would give it.
package e2e
