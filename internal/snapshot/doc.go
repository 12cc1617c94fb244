// Package snapshot is the model every front end and the engine share: typed Kubernetes objects of
// one or more namespaces as one source read them, container log tails, the reference time, and
// what could not be read. Live and offline sources produce the same value, so the engine cannot
// tell them apart.
//
// Invariant: a Snapshot is read-only once Index has been called; indexes are built once so that
// diagnosing is linear in the number of objects.
package snapshot
