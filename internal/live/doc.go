// Package live reads a snapshot from a running cluster through the kubeconfig flags kubectl
// plugins share, and keeps it current with informers for the console.
//
// Invariant: the source is read-only by construction. It issues only get, list and watch
// requests; it never reads Secrets or ConfigMaps; it fetches pod logs only for failing copies and
// only a bounded tail. A kind it may not read, or that the server does not serve, becomes a
// Visibility entry instead of an error, so a narrow identity still gets a diagnosis that says what
// it could not see. So does a server error (5xx) or a timeout on a kind that only adds to the
// picture (events, slices, quotas, claims), which a watch lists again until it answers; on a
// workload kind or pods it ends the read, naming the list and its namespace.
//
// A kubeconfig user whose credentials come from a plugin (users[].user.exec) has it run once per
// read, not once per request sent at once; the credential step is bounded by the request
// timeout and ends with the read's context, and its failure is a CredentialError naming the
// plugin, never a fault of the server.
package live
