// Package live reads a snapshot from a running cluster through the kubeconfig flags kubectl
// plugins share, and keeps it current with informers for the console.
//
// Invariant: the source is read-only by construction. It issues only get, list and watch
// requests; it never reads Secrets or ConfigMaps; it fetches pod logs only for failing copies and
// only a bounded tail. A kind it may not read, or that the server does not serve, becomes a
// Visibility entry instead of an error, so a narrow identity still gets a diagnosis that says what
// it could not see.
package live
